-- Erasure on request: every event whose subject matches one searchable key
-- and value (a student id, say) loses its payload bytes, its subject and its
-- searchable values, and is left as a tombstone that says when and by which
-- erasure (lib/ledger/sql/erase.ts). Its deliveries keep their key, times and
-- statuses; those still due, on the wire or dead-lettered are resolved with
-- the new resolution `erased` so they are never sent.
--
-- The tombstone is three columns on events, not an erasure-only flag, so that
-- a later payload expunge by age writes the same columns with
-- tombstone = 'expunged' and no erasure id, and every reader (the timeline,
-- the redrive and resend refusals, the republish check) handles both:
--   tombstone     'erased' (or, later, 'expunged'); NULL for a live event
--   tombstoned_at when its payload was removed
--   erasure_id    the erasure that removed it (required for 'erased')
--
-- `erasures` records each erasure: the subject KEY only (never the value, nor
-- a hash of it: a hash of a student id is a lookup table away from the id),
-- the tenant it was limited to, who ran it, why, and the counts.
--
-- Locks: ALTER TABLE events and deliveries take ACCESS EXCLUSIVE for
-- milliseconds whatever their sizes: nullable columns without a default are a
-- catalog change (no rewrite), and the CHECK constraints are added NOT VALID,
-- so neither table is scanned under the lock (every existing row has no
-- tombstone and a resolution from the narrower list, and satisfies them).
-- While the locks are held the ingest, the claims and the dashboard wait
-- those milliseconds.

CREATE TABLE erasures (
  id                  text PRIMARY KEY,
  subject_key         text NOT NULL,
  tenant              text,
  reason              text NOT NULL,
  actor               text NOT NULL,
  status              text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished')),
  events_erased       integer NOT NULL DEFAULT 0,
  ops_events_erased   integer NOT NULL DEFAULT 0,
  deliveries_erased   integer NOT NULL DEFAULT 0,
  deliveries_resolved integer NOT NULL DEFAULT 0,
  attempts_scrubbed   integer NOT NULL DEFAULT 0,
  started_at          timestamptz NOT NULL DEFAULT now(),
  finished_at         timestamptz
);

ALTER TABLE events
  ADD COLUMN tombstone     text,
  ADD COLUMN tombstoned_at timestamptz,
  ADD COLUMN erasure_id    text;
ALTER TABLE events ADD CONSTRAINT events_tombstone_check
  CHECK ((tombstone IS NULL) = (tombstoned_at IS NULL)
         AND (tombstone IS NULL OR tombstone IN ('erased', 'expunged'))
         AND ((tombstone IS NOT DISTINCT FROM 'erased') = (erasure_id IS NOT NULL))) NOT VALID;

-- The resolution list of 0013 plus `erased`, written only by an erasure.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_resolution_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_resolution_check
  CHECK ((state = 'resolved') = (resolution IS NOT NULL)
         AND (resolution IS NULL OR (resolution IN ('discarded', 'fixed_at_source', 'superseded', 'erased')
                                     AND resolved_at IS NOT NULL AND resolved_by IS NOT NULL AND resolution_reason IS NOT NULL))) NOT VALID;
