-- The dashboard's scrape and alerts page cost what is queued, not what
-- exists: at 50,000 mostly idle subscriptions they read every counter row of
-- delivery_state_counts (one per subscription and state, delivered included)
-- and folded the per-backend rows by reading the whole table, on every scrape.
--
-- delivery_state_counts_queue: the counter rows of the states that make a
-- queue (pending, scheduled, in flight, dead letter), by state first, so the
-- scrape finds the subscriptions with a queue or a dead letter without
-- reading those of the idle ones (whose rows say only `delivered`).
--
-- delivery_state_counts_unfolded: the per-backend rows (backend <> 0) the
-- fold moves into backend 0, so the fold reads what was written since the
-- last fold rather than every counter. Neither index holds `n`, the one column
-- the triggers' upserts change, so those updates stay HOT; a writer pays one
-- index entry per counter row it creates (its first change of a subscription
-- and state after a fold).
--
-- hl_fold_delivery_state_counts: removes the backend-0 rows that the fold
-- brought to zero, found among the groups it folded, instead of looking for
-- zeros across the whole table. Every row is kept as it was: the indexes and
-- the function change no counter.
--
-- Locks: CREATE INDEX holds SHARE on delivery_state_counts while it builds
-- (the counters' writers, which are the deliveries triggers, wait for it: a
-- table of one row per subscription, state and writer, built in milliseconds
-- at 50,000 subscriptions); CREATE OR REPLACE FUNCTION changes the catalog
-- only, an instant.
CREATE INDEX delivery_state_counts_queue ON delivery_state_counts (state, subscription_id, reason)
  WHERE state IN ('pending', 'scheduled', 'in_flight', 'dead_letter');

CREATE INDEX delivery_state_counts_unfolded ON delivery_state_counts (backend) WHERE backend <> 0;

CREATE OR REPLACE FUNCTION hl_fold_delivery_state_counts() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  zero_subs text[];
  zero_states text[];
  zero_reasons text[];
BEGIN
  WITH moved AS (
    DELETE FROM delivery_state_counts
    WHERE ctid IN (SELECT ctid FROM delivery_state_counts WHERE backend <> 0 FOR UPDATE SKIP LOCKED)
    RETURNING subscription_id, state, reason, n
  ), folded AS (
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, reason, 0, sum(n) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n
    RETURNING subscription_id, state, reason, n
  )
  SELECT array_agg(subscription_id), array_agg(state), array_agg(reason) INTO zero_subs, zero_states, zero_reasons
    FROM folded WHERE n = 0;
  IF zero_subs IS NOT NULL THEN
    DELETE FROM delivery_state_counts c
     USING unnest(zero_subs, zero_states, zero_reasons) AS z(subscription_id, state, reason)
     WHERE c.subscription_id = z.subscription_id AND c.state = z.state AND c.reason = z.reason AND c.backend = 0 AND c.n = 0;
  END IF;
END $$;
