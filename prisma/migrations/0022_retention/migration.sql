-- Retention (docs/DESIGN.md, Retention): finished deliveries (delivered,
-- resolved), their attempts and the events nothing else needs are removed
-- once older than the policy (HOOKLEDGER_RETENTION_DAYS, or a tenant's
-- override); payloads may be expunged earlier (HOOKLEDGER_PAYLOAD_RETENTION_DAYS:
-- the event becomes a tombstone 'expunged', 0019_erasure, its delivery rows
-- stay). Pending, scheduled, in-flight and dead-lettered deliveries, and their
-- events, are never removed or expunged by age.
--
--   retention_policies  one row per tenant that overrides the environment's
--                       days (keyed by the tenant id string; no foreign key, so
--                       an override may name a tenant before or without a
--                       tenants table; the API checks the tenant exists).
--   retention_runs      one row per run that removed or expunged anything, or
--                       was started by a person: when, by whom (`system` for the
--                       daily run), the policy it applied and how many rows of
--                       each table it removed. Never a removed value.
--   deliveries_finished the walk of finished deliveries by the time they
--                       finished, oldest first, so a run reads only expired
--                       rows instead of scanning the table. Partial: pending,
--                       scheduled, in-flight and dead-lettered rows (the hot
--                       ones) are not in it, so claims and most result writes
--                       do not maintain it; a result write that delivers adds
--                       one entry.
--
-- Locks: CREATE TABLE takes nothing others wait for. CREATE INDEX takes SHARE
-- on deliveries for as long as it reads the finished rows (about a second per
-- million on the bench machine): the ingest's inserts and the worker's result
-- writes wait that long, reads do not. The migration runner applies each
-- migration in a transaction, so CONCURRENTLY is not available; run it at a
-- quiet moment on a large ledger.

CREATE TABLE retention_policies (
  tenant                 text PRIMARY KEY,
  retention_days         integer NOT NULL CHECK (retention_days BETWEEN 1 AND 36500),
  payload_retention_days integer CHECK (payload_retention_days BETWEEN 1 AND 36500),
  updated_by             text NOT NULL,
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CHECK (payload_retention_days IS NULL OR payload_retention_days <= retention_days)
);

CREATE TABLE retention_runs (
  id                  text PRIMARY KEY,
  trigger             text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  actor               text NOT NULL,
  status              text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'failed')),
  -- {"retentionDays", "payloadRetentionDays", "overrides": [{"tenant", "retentionDays", "payloadRetentionDays"}]}
  policy              jsonb NOT NULL,
  deliveries_removed  integer NOT NULL DEFAULT 0,
  attempts_removed    integer NOT NULL DEFAULT 0,
  events_removed      integer NOT NULL DEFAULT 0,
  events_expunged     integer NOT NULL DEFAULT 0,
  partitions_dropped  integer NOT NULL DEFAULT 0,
  error               text,
  started_at          timestamptz NOT NULL DEFAULT now(),
  finished_at         timestamptz
);
CREATE INDEX retention_runs_started ON retention_runs (started_at DESC);

CREATE INDEX deliveries_finished ON deliveries ((greatest(delivered_at, resolved_at)), id)
  WHERE state IN ('delivered', 'resolved');
