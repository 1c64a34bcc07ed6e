-- Archiving a subscription: an operator retires an endpoint without deleting
-- anything. archived_at, archive_reason and archived_by record who retired it,
-- when and why; all three are NULL for a live subscription and all three are
-- set for an archived one (the CHECK). Its history (events, deliveries,
-- attempts, audit rows) stays as it is and stays searchable.
--
-- An archived subscription receives no new deliveries: hl_enqueue_events (as
-- 0015 left it) gains one condition on the subscription row it already joins,
-- `s.archived_at IS NULL`. That is a column read on a row the statement has in
-- hand, so the ingest hot path's plan and cost are unchanged. The worker's
-- claim skips archived subscriptions too (lib/ledger/sql/claim.ts), so a
-- delivery that was in flight at archive time and then needs a retry is held,
-- visible on the subscription's page, not sent.
--
-- Locks: ALTER TABLE subscriptions takes ACCESS EXCLUSIVE on subscriptions for
-- milliseconds whatever its size: the three nullable columns without a
-- default are a catalog change (no rewrite), and the CHECK is added NOT VALID
-- so the table is not scanned under the lock (every existing row has three
-- NULLs and satisfies it). While it is held, enqueues and claims (which read
-- subscriptions) wait those milliseconds. hl_enqueue_events is replaced in
-- place (CREATE OR REPLACE, same signature): an ingest statement running
-- meanwhile finishes with the old body.

ALTER TABLE subscriptions
  ADD COLUMN archived_at    timestamptz,
  ADD COLUMN archive_reason text,
  ADD COLUMN archived_by    text;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_archive_check
  CHECK ((archived_at IS NULL) = (archive_reason IS NULL) AND (archived_at IS NULL) = (archived_by IS NULL)) NOT VALID;

-- hl_enqueue_events (0015) with archived subscriptions left out of the
-- matching; otherwise unchanged (see 0011 for the lock order and the NOTIFY).
CREATE OR REPLACE FUNCTION hl_enqueue_events(
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
      ON hl_subscription_matches(s.event_types, s.tenant, ev.type, ev.tenant)
     AND s.archived_at IS NULL
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key, pg_notify('hookledger_deliveries', '')
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
$$;
