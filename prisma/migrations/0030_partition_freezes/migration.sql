-- A deliveries month being emptied by retention is "frozen": the workers
-- leave it out of their statements while it is locked, so its lock does not
-- stall the drain (docs/SCALING.md, "Emptying a deliveries month").
--
-- Why: PostgreSQL locks every month of `deliveries` when it plans the
-- worker's claim or result write (their rows' months are known only when the
-- statement runs). Retention empties a past month under an ACCESS EXCLUSIVE
-- lock on that month (a truncate and the kept rows written back: about 3 s on
-- a 1.6 M-row month), and every worker cycle planned meanwhile waited for it.
-- A statement whose WHERE names the month's bounds as constants is pruned when
-- planned and takes no lock on it.
--
-- partition_freezes: one row per month being emptied. Retention writes it,
-- NOTIFYs hookledger_partition_freeze, and waits until every live worker
-- has acknowledged (worker_heartbeats.freeze_seen >= gen); then it counts the
-- month's in-flight rows per subscription into in_flight (the claim adds them
-- to each subscription's busy count, since it no longer reads the month), and
-- only then takes the lock. It deletes the row when the month is done.
-- expires_at bounds a freeze whose retention run died.
--
-- Locks: CREATE TABLE, and ADD COLUMN of a nullable column with no default,
-- which holds ACCESS EXCLUSIVE on worker_heartbeats for an instant.
CREATE TABLE partition_freezes (
  gen        bigserial PRIMARY KEY,
  "partition" text NOT NULL UNIQUE,
  lo         timestamptz NOT NULL,
  hi         timestamptz NOT NULL,
  in_flight  jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

ALTER TABLE worker_heartbeats ADD COLUMN freeze_seen bigint;
