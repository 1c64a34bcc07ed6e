-- The content hash of an event (lib/events/canonical.ts eventContentHash:
-- sha256 of the canonical JSON of type, data and subject), so a republish of
-- an existing id is compared by one 32-byte equality: the same content is a
-- republish (200, the same deliveries), another is a 409 event_conflict.
--
-- Rows stored before this column existed keep NULL, "unknown": for them only
-- the type is compared, as before. Computing their hash here would mean
-- re-implementing the canonical JSON in SQL (jsonb's own text orders keys by
-- length first and writes numbers differently from JavaScript), and a hash
-- that differs from the TypeScript one by a single byte would turn every
-- honest retry of an old event into a 409. Old events are past their
-- producers' retry windows, so the gap closes by itself. Operational events
-- (hl_publish_ops_event) have fresh ids and are never republished: NULL too.
ALTER TABLE events ADD COLUMN content_hash bytea;

-- hl_enqueue_events (0011) with one more array, the events' content hashes.
-- The body is otherwise unchanged; see 0011 for the matching, the lock order
-- and the NOTIFY. The old signature is dropped so that a 9- or 10-argument
-- call cannot resolve to two functions.
DROP FUNCTION hl_enqueue_events(text[], text[], bytea[], timestamptz[], text[], jsonb[], text[], int[], int[], text[]);
CREATE FUNCTION hl_enqueue_events(
  p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamptz[], p_tenants text[], p_subjects jsonb[],
  p_subject_values text[], p_sv_from int[], p_sv_to int[], p_subscriptions text[] DEFAULT NULL, p_hashes bytea[] DEFAULT NULL)
RETURNS TABLE (event_id text, delivery_id text, subscription_id text, delivery_key text)
LANGUAGE sql VOLATILE AS $$
  WITH inp AS (
    SELECT i.id, i.type, i.payload, i.occurred_at, i.tenant, i.subject, p_subject_values[i.sv_from:i.sv_to] AS subject_values, p_hashes[i.n] AS content_hash
    FROM unnest(p_ids, p_types, p_payloads, p_occurred_at, p_tenants, p_subjects, p_sv_from, p_sv_to) WITH ORDINALITY
         AS i(id, type, payload, occurred_at, tenant, subject, sv_from, sv_to, n)
  ), ev AS (
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, content_hash)
    SELECT id, type, payload, occurred_at, tenant, coalesce(subject, '{}'), coalesce(subject_values, '{}'), content_hash FROM inp ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, type, tenant
  ), dl AS (
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
    SELECT hl_delivery_key(s.id, ev.id), ev.id, s.id, ev.type
    FROM ev JOIN subscriptions s
      ON (s.event_types @> ARRAY[ev.type] OR (s.event_types @> ARRAY['*']::text[] AND ev.type NOT LIKE 'hookledger.%'))
     AND (s.tenant IS NULL OR s.tenant = ev.tenant)
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key, pg_notify('hookledger_deliveries', '')
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
$$;
