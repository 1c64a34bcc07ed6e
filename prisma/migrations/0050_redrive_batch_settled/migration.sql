-- When a done batch's deliveries have all gone out. The pacer marks a batch
-- done once every item is back in the queue; at a rate above what the
-- endpoint takes, many of its deliveries are still queued or being sent then,
-- and the Redrives list says so ("Done: N still on their way") as the batch's
-- page does. Counting that for every listed batch would join every listed
-- batch's items (up to 50,000 each) to deliveries on every poll. settled_at
-- is set by the pacer (worker/redrive-pacer.ts, settleDoneBatches in
-- lib/ledger/sql/recover.ts) once none of a done batch's sent
-- deliveries is pending, in flight or scheduled, so the list counts only its
-- done rows not yet settled, normally few and recent.
--
-- Every row is kept. Existing done batches get NULL: the pacer settles them
-- lazily, a few per round (a batch finished long ago settles on its first
-- check), and until then the list counts them as it would a new one.
--
-- Locks: each ADD COLUMN without a default takes ACCESS EXCLUSIVE on
-- redrive_batches for a catalog change only, no rewrite (a pacer step or a
-- list read waits a moment). CREATE INDEX holds SHARE on redrive_batches
-- while it reads the table (milliseconds at thousands of batches): a pacer
-- step or a new batch waits that long, the list's reads do not. The index
-- holds the done batches not yet settled (at first every done one), which the
-- pacer looks through. The migration runner applies a migration in a
-- transaction, so CONCURRENTLY is not available.
ALTER TABLE redrive_batches ADD COLUMN settled_at timestamptz;
-- Where the pacer's last look found a delivery still on its way (its item's seq): the next look starts there.
ALTER TABLE redrive_batches ADD COLUMN settle_seq integer;
CREATE INDEX redrive_batches_unsettled ON redrive_batches (finished_at, id) WHERE status = 'done' AND settled_at IS NULL;
