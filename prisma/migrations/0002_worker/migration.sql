-- The delivery worker: attempt provenance carried on the delivery,
-- the lease start for the reaper, and the indexes of the hot path.

-- What the next attempt is: 'scheduled' (the ladder), 'redrive' or 'manual'.
-- A redrive sets next_trigger/next_actor with the row; the worker copies them
-- into attempts.trigger/actor and resets them to 'scheduled'/NULL afterwards.
ALTER TABLE deliveries
  ADD COLUMN next_trigger text NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'redrive', 'manual')),
  ADD COLUMN next_actor   text,
  -- When the current lease was taken: the started_at of an attempt the reaper records as abandoned.
  ADD COLUMN leased_at    timestamptz;

-- The claim: due rows of one subscription, oldest due first (a LATERAL per active subscription).
CREATE INDEX deliveries_sub_due ON deliveries (subscription_id, next_attempt_at) WHERE state IN ('pending', 'scheduled');
-- The per-subscription concurrency cap counts in-flight rows per subscription.
CREATE INDEX deliveries_sub_in_flight ON deliveries (subscription_id) WHERE state = 'in_flight';
