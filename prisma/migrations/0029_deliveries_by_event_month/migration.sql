-- `deliveries` becomes range-partitioned by month on a new column, event_at:
-- the created_at of the delivery's event (what event_keys holds for it).
-- docs/SCALING.md ("deliveries, partitioned by their event's month") gives the
-- reasons; in short, every delivery of an event lives in its event's month,
-- backfilled or not, so a month of events and its month of deliveries expire
-- together and retention can swap both instead of deleting deliveries one by
-- one.
--
-- What changes:
--
-- * The primary key is (id, event_at) and the pair key is UNIQUE (event_id,
--   subscription_id, event_at). An event id has one created_at (event_keys),
--   so the pair key is as strong as before; the enqueue and the backfill keep
--   their ON CONFLICT on it. Delivery ids come from hl_new_id (time and
--   random bits), unique in practice across months; the key only checks it
--   within one.
-- * redrive_batch_items.delivery_id loses its foreign key (a key into a
--   partitioned table must name its whole key). Retention removes no
--   delivery that a running batch names, in the statement that removes it.
-- * hl_ensure_partition makes deliveries months too (key event_at).
-- * hl_enqueue_events writes each delivery's event_at from the key it
--   inserted.
-- * deliveries_finished also carries (subscription_id, state) (see below).
-- * The statement triggers (delivery counts, operational events) and the row
--   trigger that keeps an erased event from being sent are created again on
--   the new table, unchanged.
--
-- Every delivery is kept: one whose event key is gone (none should be; the
-- ledger's statements keep the reference since 0028) takes its own
-- created_at as event_at.
--
-- Locks and duration: the conversion copies every delivery into the new
-- table and builds its indexes inside the migration's one transaction,
-- holding ACCESS EXCLUSIVE on deliveries (and on redrive_batch_items for the
-- key's drop) from start to commit: the ingest, the claims, the result writes
-- and the dashboard wait for the whole run. Run it in a maintenance window
-- (stop the workers and the ingest, migrate, start them again). Measured in
-- BENCHMARKS.md F10.

ALTER TABLE redrive_batch_items DROP CONSTRAINT IF EXISTS redrive_batch_items_delivery_id_fkey;

DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT conrelid::regclass AS tbl, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'deliveries'::regclass LOOP
    RAISE EXCEPTION 'unexpected foreign key % on % into deliveries', r.conname, r.tbl;
  END LOOP;
END $$;

-- hl_ensure_partition (0021) for the three partitioned tables; the partition
-- key is event_at for deliveries, created_at for the others.
CREATE OR REPLACE FUNCTION hl_ensure_partition(p_parent text, p_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_from timestamptz := date_trunc('month', p_at, 'UTC');
  v_to   timestamptz := date_trunc('month', date_trunc('month', p_at, 'UTC') + interval '40 days', 'UTC');
  v_name text := p_parent || '_p' || to_char(date_trunc('month', p_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY_MM');
  v_key  text := CASE p_parent WHEN 'deliveries' THEN 'event_at' ELSE 'created_at' END;
BEGIN
  IF p_parent NOT IN ('events', 'attempts', 'deliveries') THEN
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
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I >= %L AND %I < %L)', v_name, v_name || '_bounds', v_key, v_from, v_key, v_to);
  EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM m',
                 p_parent || '_default', v_key, v_from, v_key, v_to, v_name);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', p_parent, v_name, v_from, v_to);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_name, v_name || '_bounds');
  RETURN true;
END $$;

DO $$
DECLARE
  v_min   timestamptz;
  v_month timestamptz;
  v_idx   text[];
  v_trg   text[];
  v_def   text;
BEGIN
  -- Built beside the old table with its columns, defaults and CHECKs, then event_at last.
  CREATE TABLE deliveries_partitioned (LIKE deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS,
                                       event_at timestamptz NOT NULL)
    PARTITION BY RANGE (event_at);
  CREATE TABLE deliveries_default PARTITION OF deliveries_partitioned DEFAULT;
  SELECT min(coalesce(k.created_at, d.created_at)) INTO v_min FROM deliveries d LEFT JOIN event_keys k ON k.id = d.event_id;
  v_month := date_trunc('month', least(coalesce(v_min, now()), now()), 'UTC');
  WHILE v_month < date_trunc('month', now(), 'UTC') + interval '3 months' - interval '1 day' LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF deliveries_partitioned FOR VALUES FROM (%L) TO (%L)',
                   'deliveries_p' || to_char(v_month AT TIME ZONE 'UTC', 'YYYY_MM'),
                   v_month, date_trunc('month', v_month + interval '40 days', 'UTC'));
    v_month := date_trunc('month', v_month + interval '40 days', 'UTC');
  END LOOP;
  INSERT INTO deliveries_partitioned
  SELECT d.*, coalesce(k.created_at, d.created_at) FROM deliveries d LEFT JOIN event_keys k ON k.id = d.event_id;

  -- The secondary indexes and the triggers as they are now (every migration's), made again on the new table.
  SELECT array_agg(indexdef) INTO v_idx FROM pg_indexes
   WHERE schemaname = current_schema() AND tablename = 'deliveries'
     AND indexname NOT IN ('deliveries_pkey', 'deliveries_event_id_subscription_id_key', 'deliveries_finished');
  SELECT array_agg(pg_get_triggerdef(oid)) INTO v_trg FROM pg_trigger WHERE tgrelid = 'deliveries'::regclass AND NOT tgisinternal;
  DROP TABLE deliveries;
  ALTER TABLE deliveries_partitioned RENAME TO deliveries;
  ALTER TABLE deliveries ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id, event_at);
  ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_subscription_id_key UNIQUE (event_id, subscription_id, event_at);
  FOREACH v_def IN ARRAY coalesce(v_idx, '{}') LOOP
    EXECUTE v_def;
  END LOOP;
  -- The finished rows' index (0022) also carries each row's subscription and
  -- state: a month swap takes the rows it drops off the state counters by
  -- reading this index alone, with the month locked.
  CREATE INDEX deliveries_finished ON deliveries ((greatest(delivered_at, resolved_at)), id) INCLUDE (subscription_id, state)
   WHERE state IN ('delivered', 'resolved');
  FOREACH v_def IN ARRAY coalesce(v_trg, '{}') LOOP
    EXECUTE v_def;
  END LOOP;
END $$;

-- hl_enqueue_events (0027) with each delivery's event_at: the created_at of
-- the key this statement inserted. Otherwise unchanged.
CREATE OR REPLACE FUNCTION hl_enqueue_events(
  p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamptz[], p_tenants text[], p_subjects jsonb[],
  p_subject_values text[], p_sv_from int[], p_sv_to int[], p_subscriptions text[] DEFAULT NULL, p_hashes bytea[] DEFAULT NULL,
  p_wake boolean DEFAULT true)
RETURNS TABLE (event_id text, delivery_id text, subscription_id text, delivery_key text)
LANGUAGE sql VOLATILE AS $$
  WITH sv AS (
    SELECT f.n, array_agg(v.val ORDER BY v.pos) AS vals
      FROM unnest(p_sv_from, p_sv_to) WITH ORDINALITY AS f(lo, hi, n)
      CROSS JOIN LATERAL generate_series(f.lo, f.hi) AS g(pos)
      JOIN unnest(p_subject_values) WITH ORDINALITY AS v(val, pos) ON v.pos = g.pos
     GROUP BY f.n
  ), inp AS (
    SELECT i.id, i.type, i.payload, i.occurred_at, i.tenant, i.subject, sv.vals AS subject_values, i.content_hash
    FROM unnest(p_ids, p_types, p_payloads, p_occurred_at, p_tenants, p_subjects, p_hashes) WITH ORDINALITY
         AS i(id, type, payload, occurred_at, tenant, subject, content_hash, n)
    LEFT JOIN sv ON sv.n = i.n
  ), k AS (
    INSERT INTO event_keys (id, created_at)
    SELECT id, now() FROM inp ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, created_at
  ), ev AS (
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, content_hash, created_at)
    SELECT inp.id, inp.type, inp.payload, inp.occurred_at, inp.tenant, coalesce(inp.subject, '{}'), coalesce(inp.subject_values, '{}'), inp.content_hash, k.created_at
      FROM inp JOIN k ON k.id = inp.id ORDER BY inp.id
    RETURNING id, type, tenant, created_at
  ), dl AS (
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at)
    SELECT hl_delivery_key(s.id, ev.id), ev.id, s.id, ev.type, ev.created_at
    FROM ev JOIN subscriptions s
      ON hl_subscription_matches(s.event_types, s.tenant, ev.type, ev.tenant)
     AND s.archived_at IS NULL
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key
  ), held AS (
    SELECT s.id FROM subscriptions s WHERE s.id IN (SELECT dl.subscription_id FROM dl) ORDER BY s.id FOR KEY SHARE OF s
  ), wake AS (
    SELECT pg_notify('hookledger_deliveries', '') WHERE p_wake AND EXISTS (SELECT 1 FROM dl)
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
  WHERE (SELECT count(*) FROM held) >= 0 AND (SELECT count(*) FROM wake) >= 0
$$;
