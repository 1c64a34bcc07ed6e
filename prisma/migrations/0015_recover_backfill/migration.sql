-- Recover and backfill run on the bulk-redrive machinery (redrive_batches,
-- its items and the worker's pacer), so a batch now has a kind:
--   redrive   dead letters back to pending (0005),
--   recover   a subscription's deliveries created in a window sent again
--             (delivered and resolved ones as a resend, dead letters as a redrive),
--   backfill  deliveries created, at the batch's rate, for a subscription's
--             past events that have none for it yet.
-- A backfill item names an event: its delivery does not exist until the pacer
-- creates it, so delivery_id becomes nullable and is filled in then.
--
-- The subscription matching (event type or '*', tenant) moves out of
-- hl_enqueue_events into hl_subscription_matches, so ingest and backfill share
-- one definition. It is a one-expression SQL function, inlined by the planner
-- into the queries that call it: the enqueue's plan (and the GIN index on
-- subscriptions.event_types it may use) is unchanged.
--
-- Locks: one transaction holding ACCESS EXCLUSIVE on redrive_batches and
-- redrive_batch_items (a pacer step or a batch created meanwhile waits) for
-- milliseconds whatever their size: the new columns are a catalog change
-- (kind's constant default is stored once, not written into every row),
-- DROP NOT NULL does not scan, and the new CHECK and foreign key are added
-- NOT VALID, so neither table is scanned under the lock. Every existing row
-- already satisfies them (kind 'redrive', delivery_id set, event_id NULL, an
-- outcome from the narrower list). hl_enqueue_events is replaced in place
-- (CREATE OR REPLACE, same signature): an ingest statement running meanwhile
-- finishes with the old body.

ALTER TABLE redrive_batches
  ADD COLUMN kind text NOT NULL DEFAULT 'redrive';
ALTER TABLE redrive_batches ADD CONSTRAINT redrive_batches_kind_check
  CHECK (kind IN ('redrive', 'recover', 'backfill')) NOT VALID;
-- The Redrives page filters by kind.
CREATE INDEX redrive_batches_kind_created ON redrive_batches (kind, created_at DESC);

ALTER TABLE redrive_batch_items ALTER COLUMN delivery_id DROP NOT NULL;
ALTER TABLE redrive_batch_items ADD COLUMN event_id text;
ALTER TABLE redrive_batch_items ADD CONSTRAINT redrive_batch_items_event_id_fkey
  FOREIGN KEY (event_id) REFERENCES events (id) NOT VALID;
ALTER TABLE redrive_batch_items ADD CONSTRAINT redrive_batch_items_target_check
  CHECK (delivery_id IS NOT NULL OR event_id IS NOT NULL) NOT VALID;
ALTER TABLE redrive_batch_items DROP CONSTRAINT redrive_batch_items_outcome_check;
ALTER TABLE redrive_batch_items ADD CONSTRAINT redrive_batch_items_outcome_check
  CHECK (outcome IS NULL OR outcome IN
    ('redriven', 'skipped_not_dead_lettered', 'skipped_subscription_inactive', 'skipped_superseded',
     -- recover
     'resent', 'skipped_in_progress', 'skipped_state_changed',
     -- backfill
     'created', 'skipped_exists')) NOT VALID;

-- Does a subscription (its event_types and tenant) receive an event (its type
-- and tenant)? '*' is every type except hookledger's own operational events.
CREATE FUNCTION hl_subscription_matches(p_event_types text[], p_sub_tenant text, p_type text, p_tenant text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (p_event_types @> ARRAY[p_type] OR (p_event_types @> ARRAY['*']::text[] AND p_type NOT LIKE 'hookledger.%'))
     AND (p_sub_tenant IS NULL OR p_sub_tenant = p_tenant)
$$;

-- hl_enqueue_events (0014) with its matching through hl_subscription_matches;
-- otherwise unchanged (see 0011 for the lock order and the NOTIFY).
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
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key, pg_notify('hookledger_deliveries', '')
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
$$;
