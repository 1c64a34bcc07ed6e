-- The enqueue's cost per event (BENCHMARKS.md F7). Four changes, none to what is written.
--
-- 1. hl_delivery_key is STABLE, as what it calls is (convert_to). Declared
-- IMMUTABLE over a stable body, PostgreSQL would not inline it: the enqueue
-- ran it as a function call of its own for every delivery.
CREATE OR REPLACE FUNCTION hl_delivery_key(p_subscription_id text, p_event_id text) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(p_subscription_id || ':' || p_event_id, 'UTF8')), 'hex')
$$;

-- 2. deliveries.subscription_id no longer has a foreign key to subscriptions.
--
-- Why: the key checked every delivery the enqueue wrote against its
-- subscription, one lookup per row, three per event at the bench's fan-out,
-- for subscriptions that are never deleted (they are archived, migration 0018).
--
-- What holds the reference instead: deliveries are written only by the
-- ledger's statements (lib/ledger/sql: the enqueue below and the backfill),
-- each of which joins the subscription row it writes for. What the key's
-- check also did, and the archive relies on (lib/subscriptions/archive.ts),
-- is to hold KEY SHARE on that row until the commit, so an archive's FOR
-- UPDATE waits for an enqueue that has written deliveries for it: the enqueue
-- now takes that lock itself, once per subscription it wrote for (`held`
-- below), and the backfill on the one subscription it writes for.
--
-- Locks: dropping the constraint takes SHARE ROW EXCLUSIVE on deliveries and
-- subscriptions for a catalog change (milliseconds); nothing is scanned.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_subscription_id_fkey;

-- hl_enqueue_events (0021) with, besides the lock:
-- 3. each event's hash and subject values read in one pass over the arrays.
--    Indexing a variable-width array element (p_hashes[n], a slice of
--    p_subject_values) walks the array from its start, so a group of 500
--    events walked the arrays about 500 times.
-- 4. one NOTIFY per statement instead of one per delivery (PostgreSQL folds
--    equal notifications of a transaction into one anyway; the calls cost).
-- Otherwise unchanged (see 0011 for the lock order and the NOTIFY).
CREATE OR REPLACE FUNCTION hl_enqueue_events(
  p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamptz[], p_tenants text[], p_subjects jsonb[],
  p_subject_values text[], p_sv_from int[], p_sv_to int[], p_subscriptions text[] DEFAULT NULL, p_hashes bytea[] DEFAULT NULL)
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
    SELECT pg_notify('hookledger_deliveries', '') WHERE EXISTS (SELECT 1 FROM dl)
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
  WHERE (SELECT count(*) FROM held) >= 0 AND (SELECT count(*) FROM wake) >= 0
$$;
