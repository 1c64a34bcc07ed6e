-- One enqueue path. Every writer of new events and their deliveries (the HTTP
-- ingest's group commit, publishEvent inside a producer's transaction, the
-- operational-event trigger, the test and bench seeders) calls
-- hl_enqueue_events, so the delivery key, the subscription matching and the
-- wake-up of the workers are written once (docs/DESIGN.md invariants 1 and 2).

-- Invariant 1: the delivery key is sha256(subscription id ":" event id), hex,
-- the same on every attempt and every redrive. lib/ledger/delivery-key.ts
-- computes the same value for receivers and tests, and
-- test/delivery-key.test.ts holds the two equal. IMMUTABLE (convert_to to
-- UTF-8 is stable only because the database encoding could change, which it
-- cannot for a database that exists); SQL rather than plpgsql so the function
-- stays a plain expression.
CREATE FUNCTION hl_delivery_key(p_subscription_id text, p_event_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(p_subscription_id || ':' || p_event_id, 'UTF8')), 'hex')
$$;

-- Writes events and one pending delivery per matching subscription, in the
-- caller's statement (so its transaction), and wakes the workers. The events
-- come as parallel arrays, one element per event; an event's subject values
-- are p_subject_values[p_sv_from[i]:p_sv_to[i]] (an array of arrays cannot be
-- ragged). An id already stored is skipped (ON CONFLICT DO NOTHING) and
-- returns no row: the caller looks up the existing event. Every event written
-- returns one row per delivery, or one row with NULL delivery columns when no
-- subscription matched.
--
-- Matching: a subscription receives an event when it lists the event's type,
-- or lists '*' and the type is not one of hookledger's own operational types
-- (a catch-all analytics sink did not ask to be paged); a subscription with a
-- tenant receives only that tenant's events. Paused and disabled
-- subscriptions get their deliveries too: held, never dropped (invariant 7).
-- p_subscriptions, when not NULL, restricts the matching to those
-- subscriptions (tests and benches seed one subscription's queue).
--
-- Events are inserted in id order and deliveries in (event id, subscription
-- id) order, so two calls racing on the same ids take their unique-index locks
-- in the same order (no deadlock between ingest groups).
--
-- NOTIFY: one notification per transaction however many rows (Postgres folds
-- identical notifications of a transaction into one), and none when nothing
-- was enqueued. The channel is lib/ledger/notify.ts's DELIVERIES_CHANNEL.
--
-- SQL rather than plpgsql: Postgres 18 caches a SQL function's plan like a
-- prepared statement's, and the body runs as the one statement the ingest's
-- group commit relies on.
CREATE FUNCTION hl_enqueue_events(
  p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamptz[], p_tenants text[], p_subjects jsonb[],
  p_subject_values text[], p_sv_from int[], p_sv_to int[], p_subscriptions text[] DEFAULT NULL)
RETURNS TABLE (event_id text, delivery_id text, subscription_id text, delivery_key text)
LANGUAGE sql VOLATILE AS $$
  WITH inp AS (
    SELECT i.id, i.type, i.payload, i.occurred_at, i.tenant, i.subject, p_subject_values[i.sv_from:i.sv_to] AS subject_values
    FROM unnest(p_ids, p_types, p_payloads, p_occurred_at, p_tenants, p_subjects, p_sv_from, p_sv_to)
         AS i(id, type, payload, occurred_at, tenant, subject, sv_from, sv_to)
  ), ev AS (
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
    SELECT id, type, payload, occurred_at, tenant, coalesce(subject, '{}'), coalesce(subject_values, '{}') FROM inp ORDER BY id
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

-- The operational events (0006) now enqueue through hl_enqueue_events; what
-- stays here is what only they need: their id, the envelope built in SQL
-- ({"id","type","timestamp","data"}, as lib/events/publish.ts builds it for
-- producers) and the subject values.
CREATE OR REPLACE FUNCTION hl_publish_ops_event(p_type text, p_tenant text, p_subject jsonb, p_data jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_id      text := hl_new_id('hlevt_');
  v_at      timestamptz := clock_timestamp();
  v_payload bytea;
  v_subject jsonb := p_subject || CASE WHEN p_tenant IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('tenant', p_tenant) END;
  v_values  text[];
BEGIN
  v_payload := convert_to(
    '{"id":' || to_json(v_id)::text
    || ',"type":' || to_json(p_type)::text
    || ',"timestamp":' || to_json(to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    || ',"data":' || p_data::text || '}', 'UTF8');
  v_values := ARRAY(SELECT DISTINCT v FROM (SELECT value AS v FROM jsonb_each_text(v_subject)
                                            UNION SELECT key || ':' || value FROM jsonb_each_text(v_subject)) s ORDER BY 1);
  PERFORM 1 FROM hl_enqueue_events(ARRAY[v_id], ARRAY[p_type], ARRAY[v_payload], ARRAY[v_at], ARRAY[p_tenant], ARRAY[v_subject],
                                   v_values, ARRAY[1], ARRAY[cardinality(v_values)]);
  RETURN v_id;
END $$;
