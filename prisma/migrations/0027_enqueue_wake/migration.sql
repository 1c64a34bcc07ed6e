-- hl_enqueue_events gets a last parameter, p_wake (default true): false
-- leaves the NOTIFY that wakes the workers to the caller.
--
-- Why: a transaction that has called NOTIFY takes PostgreSQL's one notify
-- lock at its commit and holds it through its WAL flush, so two grouped
-- ingest statements could not share a flush: their commits went one after
-- the other, each with an fsync of its own. The grouped ingest
-- (lib/events/ingest.ts) now passes false and wakes the workers itself once
-- the group has committed, from a statement of its own that does not wait
-- for a flush (lib/ledger/sql/enqueue.ts wakeWorkers); at most one such wake
-- is in flight, and one more follows it if groups committed meanwhile, so a
-- wake always comes after the last commit. Every other caller (a producer's
-- own transaction, the operational events, the seeders) keeps the default
-- and is unchanged. A wake that is lost costs at most the workers' poll
-- interval (HOOKLEDGER_WORKER_POLL_MS, 500 ms).
--
-- A parameter added to a function is a new function beside the old one, and
-- calls with the old arguments would then match both: the old one is dropped
-- first. Otherwise the body is 0024's.
--
-- Locks: a catalog change; no table is locked or read. A call to the function
-- in another session waits for the migration's commit (milliseconds).
DROP FUNCTION hl_enqueue_events(text[], text[], bytea[], timestamptz[], text[], jsonb[], text[], int[], int[], text[], bytea[]);
CREATE FUNCTION hl_enqueue_events(
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
    RETURNING id, type, tenant
  ), dl AS (
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
    SELECT hl_delivery_key(s.id, ev.id), ev.id, s.id, ev.type
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
