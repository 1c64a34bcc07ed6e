-- A subscription whose endpoint has failed every attempt for a whole window
-- (failure_window_seconds, and at least failure_min_attempts attempts) is
-- paused for failing by the worker's result write, in the same statement as
-- the attempt that tripped it (lib/ledger/sql/write-results.ts); its
-- deliveries are then held exactly as a manual pause holds them. While it is
-- paused for failing, a worker probes the endpoint with a signed
-- hookledger.ping every probe_interval_seconds (backing off to hourly) and
-- resumes it on the first 2xx (lib/ledger/sql/probe.ts).
--
-- Columns on subscriptions:
--   failure_window_seconds, failure_min_attempts, probe_interval_seconds: the
--     policy; all three NULL turns it off. Existing subscriptions get the
--     defaults (24 h, 20 attempts, 15 min).
--   paused_reason ('manual' | 'failing'), paused_at: why and since when a
--     paused subscription is paused. Existing paused rows were paused by hand.
--   failing_since, failing_attempts: the current run of consecutive failed
--     attempts (NULL and 0 while the last attempt succeeded). The result write
--     touches them only when they change, so a healthy subscription's
--     successes write nothing here.
--   next_probe_at, probe_count, last_probe_*: the probe schedule (a worker
--     claims a due probe by moving next_probe_at forward under FOR UPDATE SKIP
--     LOCKED) and the last probe's answer.
--
-- Locks: one transaction holding ACCESS EXCLUSIVE on subscriptions (claims,
-- ingest and the dashboard wait) for milliseconds: the columns' defaults are
-- constants (a catalog change, no rewrite); the CHECK constraints scan the
-- table once, and subscriptions holds one row per endpoint (thousands at
-- most); the UPDATE touches only the paused rows. The new trigger and function
-- take no lock on deliveries.

ALTER TABLE subscriptions
  ADD COLUMN failure_window_seconds integer DEFAULT 86400,
  ADD COLUMN failure_min_attempts   integer DEFAULT 20,
  ADD COLUMN probe_interval_seconds integer DEFAULT 900,
  ADD COLUMN paused_reason          text,
  ADD COLUMN paused_at              timestamptz,
  ADD COLUMN failing_since          timestamptz,
  ADD COLUMN failing_attempts       integer NOT NULL DEFAULT 0,
  ADD COLUMN next_probe_at          timestamptz,
  ADD COLUMN probe_count            integer NOT NULL DEFAULT 0,
  ADD COLUMN last_probe_at          timestamptz,
  ADD COLUMN last_probe_status      integer,
  ADD COLUMN last_probe_error       text,
  ADD COLUMN last_probe_latency_ms  integer;

-- All three or none, and coherent. The API's lower bounds are stricter
-- (lib/subscriptions/schema.ts ZFailurePolicy: a window of a minute at least);
-- the tests shorten the window below them with SQL.
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_failure_policy_check
  CHECK ((failure_window_seconds IS NULL AND failure_min_attempts IS NULL AND probe_interval_seconds IS NULL)
         OR (failure_window_seconds IS NOT NULL AND failure_min_attempts IS NOT NULL AND probe_interval_seconds IS NOT NULL
             AND failure_window_seconds >= 1 AND failure_min_attempts >= 1
             AND probe_interval_seconds >= 1 AND probe_interval_seconds <= failure_window_seconds));
-- Not tied to state: a writer that disables a paused subscription (a 410 on a
-- request already on the wire) must not fail on it; reads show the reason
-- only while the state is paused.
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_paused_reason_check
  CHECK (paused_reason IS NULL OR paused_reason IN ('manual', 'failing'));

UPDATE subscriptions SET paused_reason = 'manual', paused_at = updated_at WHERE state = 'paused';

-- The prober's claim: due probes only (a handful of rows at most).
CREATE INDEX subscriptions_next_probe ON subscriptions (next_probe_at) WHERE next_probe_at IS NOT NULL;

-- hookledger.subscription.paused, in the transaction that paused the
-- subscription for failing (the result write), like hookledger.subscription.disabled
-- (0006). A manual pause is an operator's own act and publishes nothing.
CREATE FUNCTION hl_ops_on_subscription_paused() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM hl_publish_ops_event(
    'hookledger.subscription.paused', NEW.tenant,
    jsonb_build_object('subscriptionId', NEW.id),
    jsonb_build_object('subscriptionId', NEW.id, 'subscriptionName', NEW.name, 'url', NEW.url,
                       'reason', NEW.paused_reason, 'pausedAt', NEW.paused_at, 'failingSince', NEW.failing_since,
                       'failedAttempts', NEW.failing_attempts, 'nextProbeAt', NEW.next_probe_at));
  RETURN NULL;
END $$;

CREATE TRIGGER hl_ops_subscription_paused AFTER UPDATE OF state ON subscriptions
  FOR EACH ROW WHEN (NEW.state = 'paused' AND NEW.paused_reason = 'failing' AND OLD.state IS DISTINCT FROM 'paused')
  EXECUTE FUNCTION hl_ops_on_subscription_paused();
