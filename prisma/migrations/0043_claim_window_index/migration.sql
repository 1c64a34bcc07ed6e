-- The claim's window (lib/ledger/sql/claim.ts) reads the subscriptions with
-- queued rows in id order, from where the worker's previous claim left off,
-- and stops once it has a batch's worth. It read them from
-- delivery_state_counts_queue, whose rows are ordered by state first, as two
-- ranges (pending, scheduled) merged and grouped; the planner cannot estimate
-- how many subscriptions such a merge holds (it assumes 200), so with
-- thousands queued it grouped every one of them and sorted them to keep 200:
-- about 10 ms a claim at 5,000 queued subscriptions. This index holds the
-- pending and scheduled counter rows in subscription order, so the window is
-- one ordered range grouped as it is read, and stops after the batch's worth.
-- Like the others it does not hold `n`, so the triggers' upserts stay HOT.
--
-- Locks: CREATE INDEX holds SHARE on delivery_state_counts while it builds
-- (the deliveries triggers, the counters' writers, wait for it: a table of one
-- row per subscription, state and writer, built in milliseconds at 50,000
-- subscriptions). No row changes.
CREATE INDEX delivery_state_counts_queued ON delivery_state_counts (subscription_id)
  WHERE state IN ('pending', 'scheduled');
