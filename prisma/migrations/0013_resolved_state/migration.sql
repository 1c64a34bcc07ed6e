-- A dead letter can be resolved: an operator records that it will not be
-- delivered (resolution discarded, fixed_at_source or superseded), who decided
-- and why. `resolved` is terminal until a redrive reopens the row with the
-- same key. A resend (a delivered or resolved row sent again) is recorded as
-- the next attempt's trigger, so attempts and next_trigger accept 'resend'.
--
-- Locks: the migration runs in one transaction, holding ACCESS EXCLUSIVE on
-- deliveries and attempts (workers, ingest and the dashboard wait) until it
-- commits, which takes milliseconds whatever the table sizes: the new columns
-- are nullable with no default (a catalog change, no rewrite), and the CHECK
-- constraints are added NOT VALID, so neither table is scanned under the lock.
-- They are deliberately left unvalidated: every existing row already passed
-- the narrower lists they replace (and has no resolution), and Postgres checks
-- every row written from now on against them all the same.

ALTER TABLE deliveries
  ADD COLUMN resolution        text,
  ADD COLUMN resolved_at       timestamptz,
  ADD COLUMN resolved_by       text,
  ADD COLUMN resolution_reason text;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_state_check
  CHECK (state IN ('pending', 'in_flight', 'scheduled', 'delivered', 'dead_letter', 'resolved')) NOT VALID;

-- A resolved row always carries its decision; no other row carries one.
ALTER TABLE deliveries ADD CONSTRAINT deliveries_resolution_check
  CHECK ((state = 'resolved') = (resolution IS NOT NULL)
         AND (resolution IS NULL OR (resolution IN ('discarded', 'fixed_at_source', 'superseded')
                                     AND resolved_at IS NOT NULL AND resolved_by IS NOT NULL AND resolution_reason IS NOT NULL))) NOT VALID;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_next_trigger_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_next_trigger_check
  CHECK (next_trigger IN ('scheduled', 'redrive', 'manual', 'resend')) NOT VALID;

ALTER TABLE attempts DROP CONSTRAINT attempts_trigger_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_trigger_check
  CHECK (trigger IN ('scheduled', 'redrive', 'manual', 'resend')) NOT VALID;
