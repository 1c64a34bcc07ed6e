-- The event catalog: one row per event type a producer publishes, with a
-- description for the districts that receive it, an optional JSON Schema
-- (2020-12) that a publish's `data` must match, an example payload, and the
-- JSON Pointers into `data` that lookup cards show (summary_fields). The
-- catalog is global: every tenant receives the same types.
--
-- A type that already has events is not deleted but marked deprecated, so
-- the catalog keeps describing what the ledger holds; deprecated types still
-- publish.
--
-- Locks: CREATE TABLE only; no existing table is read, rewritten or locked.

CREATE TABLE event_types (
  type           text PRIMARY KEY,
  description    text NOT NULL,
  schema         jsonb,
  example        jsonb,
  summary_fields text[] NOT NULL DEFAULT '{}',
  deprecated     boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  created_by     text NOT NULL,
  updated_by     text NOT NULL
);
