-- `events` and `attempts` become range-partitioned by month on created_at
-- (native declarative partitioning, no extension), so that retention can drop
-- a whole month instead of deleting rows one by one. `deliveries` stays one
-- table: it is the queue (invariant 2), its rows are updated on every state
-- change, and its unique delivery key (invariant 1) and (event_id,
-- subscription_id) must hold across all time, which a partitioned table can
-- only guarantee per partition. docs/SCALING.md step 1 explains the choices.
--
-- What changes besides the two tables:
--
-- * event_keys (id, created_at), unpartitioned: a unique key on a partitioned
--   table must include the partition key, so events can no longer guarantee
--   "one row per producer event id" by itself. event_keys does: the enqueue
--   inserts the id there first (ON CONFLICT (id) DO NOTHING, the idempotency
--   of a republish, as before) and writes the event only for ids it inserted.
--   Any other writer of events (fixtures, seeds) gets its keys from a
--   statement-level trigger, which fails on an id already stored with another
--   time, so no path can store one id twice.
-- * Reads from a delivery to its event (the claim's payload) go through
--   event_keys: its created_at names the event's partition, so the read of
--   events probes one month (run-time partition pruning) instead of every
--   month. deliveries itself is not rewritten (no new column).
-- * deliveries.event_id and redrive_batch_items.event_id reference
--   event_keys(id) instead of events(id) (a foreign key to a partitioned
--   table must name its whole key).
-- * attempts' primary key is (id, created_at); ids still come from one
--   identity sequence, so they stay unique and increasing, and the dashboard
--   rollup's "id greater than the watermark" keeps working.
-- * A default partition on each table catches a row whose month has no
--   partition yet (the maintenance creates the current month and two ahead,
--   so only a row written with an odd time lands there, e.g. a fixture dated
--   a year back). hl_ensure_partition moves such rows into the month's
--   partition when it creates it. Without a default, that insert would fail,
--   and a failed attempt insert loses the result write of a delivery that
--   was sent.
--
-- Locks and duration: the conversion copies every events and attempts row
-- into the new tables, builds their indexes, and checks every delivery's
-- event against event_keys and every attempt's delivery, all inside the
-- migration's one transaction. It holds ACCESS EXCLUSIVE on events and
-- attempts, and on deliveries (its foreign key is dropped and added), from
-- start to commit: the ingest, the claims, the result writes and the
-- dashboard wait for the whole run. Measured on the bench machine (2 cores,
-- embedded PostgreSQL 18, other jobs running, load average about 12) over
-- 1,000,000 events, 1,000,000 deliveries and 1,000,000 attempts spread over
-- 180 days: 1 min 51 s. Run it in a maintenance window (stop the workers and
-- the ingest, migrate, start them again).

-- The month partition of `p_parent` (events or attempts) that holds `p_at`,
-- created if missing; returns true if it created it. Idempotent and safe when
-- several processes call it at once: they queue on one advisory lock and the
-- later ones find the table. The partition is built beside the table and then
-- attached (ATTACH takes SHARE UPDATE EXCLUSIVE on the parent, so inserts and
-- reads go on; CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE). A
-- CHECK matching the bounds lets ATTACH skip scanning the new table; rows of
-- that month already in the default partition are moved first, so the
-- attach's check of the default partition (ACCESS EXCLUSIVE on the default
-- partition alone, for the length of its scan, normally empty) passes.
CREATE FUNCTION hl_ensure_partition(p_parent text, p_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_from timestamptz := date_trunc('month', p_at, 'UTC');
  v_to   timestamptz := date_trunc('month', date_trunc('month', p_at, 'UTC') + interval '40 days', 'UTC');
  v_name text := p_parent || '_p' || to_char(date_trunc('month', p_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY_MM');
BEGIN
  IF p_parent NOT IN ('events', 'attempts') THEN
    RAISE EXCEPTION 'hl_ensure_partition: % is not a partitioned ledger table', p_parent;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = v_name AND relnamespace = current_schema()::regnamespace) THEN
    RETURN false;
  END IF;
  -- "hlpart" in ASCII; the same lock for every partition change (lib/ledger/sql/partitions.ts).
  PERFORM pg_advisory_xact_lock(x'686c70617274'::bigint);
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = v_name AND relnamespace = current_schema()::regnamespace) THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', v_name, p_parent);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (created_at >= %L AND created_at < %L)', v_name, v_name || '_bounds', v_from, v_to);
  EXECUTE format('WITH m AS (DELETE FROM %I WHERE created_at >= %L AND created_at < %L RETURNING *) INSERT INTO %I SELECT * FROM m',
                 p_parent || '_default', v_from, v_to, v_name);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', p_parent, v_name, v_from, v_to);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_name, v_name || '_bounds');
  RETURN true;
END $$;

-- Foreign keys into events go first (they move to event_keys below).
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT conrelid::regclass AS tbl, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'events'::regclass LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.conname);
  END LOOP;
  FOR r IN SELECT conrelid::regclass AS tbl, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'attempts'::regclass LOOP
    RAISE EXCEPTION 'unexpected foreign key % on % into attempts', r.conname, r.tbl;
  END LOOP;
END $$;

-- 1. event_keys: one row per event id ever stored (until retention removes it).
CREATE TABLE event_keys (
  id         text PRIMARY KEY,
  created_at timestamptz NOT NULL
);
INSERT INTO event_keys (id, created_at) SELECT id, created_at FROM events;
-- Retention removes keys by age.
CREATE INDEX event_keys_created ON event_keys (created_at);

-- 2. The partitioned tables, built beside the old ones, filled, then swapped
-- in under the old names with the old index names.
DO $$
DECLARE
  t        text;
  v_min    timestamptz;
  v_month  timestamptz;
  v_idx    text[];
  v_def    text;
  v_opts   text;
BEGIN
  FOREACH t IN ARRAY ARRAY['events', 'attempts'] LOOP
    v_opts := CASE WHEN t = 'attempts' THEN ' INCLUDING IDENTITY' ELSE '' END;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS%s) PARTITION BY RANGE (created_at)',
                   t || '_partitioned', t, v_opts);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', t || '_default', t || '_partitioned');
    EXECUTE format('SELECT min(created_at) FROM %I', t) INTO v_min;
    v_month := date_trunc('month', least(coalesce(v_min, now()), now()), 'UTC');
    WHILE v_month < date_trunc('month', now(), 'UTC') + interval '3 months' - interval '1 day' LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                     t || '_p' || to_char(v_month AT TIME ZONE 'UTC', 'YYYY_MM'), t || '_partitioned',
                     v_month, date_trunc('month', v_month + interval '40 days', 'UTC'));
      v_month := date_trunc('month', v_month + interval '40 days', 'UTC');
    END LOOP;
    IF t = 'attempts' THEN
      EXECUTE 'INSERT INTO attempts_partitioned OVERRIDING SYSTEM VALUE SELECT * FROM attempts';
    ELSE
      EXECUTE 'INSERT INTO events_partitioned SELECT * FROM events';
    END IF;
    -- The secondary indexes as they are now (every migration's), rebuilt on the new table after the copy.
    SELECT array_agg(indexdef) INTO v_idx FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = t AND indexname <> t || '_pkey';
    EXECUTE format('DROP TABLE %I', t);
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t || '_partitioned', t);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id, created_at)', t, t || '_pkey');
    FOREACH v_def IN ARRAY coalesce(v_idx, '{}') LOOP
      EXECUTE v_def;
    END LOOP;
  END LOOP;
  -- Identity continues after the highest copied id.
  PERFORM setval(pg_get_serial_sequence('attempts', 'id'), coalesce((SELECT max(id) FROM attempts), 0) + 1, false);
END $$;

ALTER TABLE attempts ADD CONSTRAINT attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES deliveries (id);
-- Deferred to the commit: a statement that writes events and their deliveries
-- itself (fixtures: INSERT INTO events ... in a CTE, then deliveries) gets the
-- events' keys from the statement trigger below, which runs after the
-- statement's row checks; checked at the commit, the key is there. The
-- enqueue writes its keys first and is not affected either way.
ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES event_keys (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE redrive_batch_items ADD CONSTRAINT redrive_batch_items_event_id_fkey FOREIGN KEY (event_id) REFERENCES event_keys (id);

-- Keys for events written other than by the enqueue (which writes its keys
-- itself, first). A row whose key is already there with the same time is the
-- enqueue's own; a key there with another time is a second event under one
-- id, and the insert fails on event_keys' primary key.
CREATE FUNCTION hl_event_keys_from_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_keys (id, created_at)
  SELECT n.id, n.created_at FROM new_events n
   WHERE NOT EXISTS (SELECT 1 FROM event_keys k WHERE k.id = n.id AND k.created_at = n.created_at);
  RETURN NULL;
END $$;
CREATE TRIGGER hl_event_keys AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION hl_event_keys_from_events();

-- hl_enqueue_events (0018) with the event's key written first: the id's
-- uniqueness lives in event_keys now. Otherwise unchanged (see 0011 for the lock order and the NOTIFY).
CREATE OR REPLACE FUNCTION hl_enqueue_events(
  p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamptz[], p_tenants text[], p_subjects jsonb[],
  p_subject_values text[], p_sv_from int[], p_sv_to int[], p_subscriptions text[] DEFAULT NULL, p_hashes bytea[] DEFAULT NULL)
RETURNS TABLE (event_id text, delivery_id text, subscription_id text, delivery_key text)
LANGUAGE sql VOLATILE AS $$
  WITH inp AS (
    SELECT i.id, i.type, i.payload, i.occurred_at, i.tenant, i.subject, p_subject_values[i.sv_from:i.sv_to] AS subject_values, p_hashes[i.n] AS content_hash
    FROM unnest(p_ids, p_types, p_payloads, p_occurred_at, p_tenants, p_subjects, p_sv_from, p_sv_to) WITH ORDINALITY
         AS i(id, type, payload, occurred_at, tenant, subject, sv_from, sv_to, n)
  ), k AS (
    INSERT INTO event_keys (id, created_at)
    SELECT id, now() FROM inp ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, created_at
  ), ev AS (
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, content_hash, created_at)
    SELECT inp.id, inp.type, inp.payload, inp.occurred_at, inp.tenant, coalesce(inp.subject, '{}'), coalesce(inp.subject_values, '{}'), inp.content_hash, k.created_at
      FROM inp JOIN k ON k.id = inp.id ORDER BY inp.id
    RETURNING id, type, tenant
  ), dl AS (
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
    SELECT hl_delivery_key(s.id, ev.id), ev.id, s.id, ev.type
    FROM ev JOIN subscriptions s
      ON hl_subscription_matches(s.event_types, s.tenant, ev.type, ev.tenant)
     AND s.archived_at IS NULL
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key, pg_notify('hookledger_deliveries', '')
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
$$;
