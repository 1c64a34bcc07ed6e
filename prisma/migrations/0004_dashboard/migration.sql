-- Dashboard read models. The dashboard never scans the hot queue rows
-- per request for history: a sampler (lib/dlq/sampler.ts) running in the
-- dashboard process writes these every ~15 s, guarded by an advisory lock so
-- several dashboard instances take one sample between them.

-- DLQ depth and oldest age over time: one row per sample (the charts).
CREATE TABLE dlq_samples (
  sampled_at timestamptz PRIMARY KEY,
  depth      integer NOT NULL,
  oldest_at  timestamptz                      -- dead_lettered_at of the oldest row; NULL when empty
);

-- The same sample broken down by the filters a redrive takes: subscription,
-- reason, error class, last status code ("depth now by subscription and reason").
CREATE TABLE dlq_sample_groups (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sampled_at      timestamptz NOT NULL REFERENCES dlq_samples (sampled_at) ON DELETE CASCADE,
  subscription_id text NOT NULL,
  reason          text,
  error_class     text,
  status_code     integer,
  depth           integer NOT NULL,
  oldest_at       timestamptz
);
CREATE INDEX dlq_sample_groups_sampled ON dlq_sample_groups (sampled_at);
CREATE INDEX dlq_sample_groups_sub ON dlq_sample_groups (subscription_id, sampled_at);

-- Attempts rolled up per subscription and minute: success rate, latency
-- percentiles and the outcomes chart read this, never a scan of attempts.
-- latency_hist[i] counts attempts whose duration_ms fell in bucket i of
-- LATENCY_BOUNDS_MS (lib/dashboard/latency.ts).
CREATE TABLE attempt_stats_minute (
  subscription_id text NOT NULL,
  bucket          timestamptz NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  delivered       integer NOT NULL DEFAULT 0,
  retried         integer NOT NULL DEFAULT 0,
  dead_lettered   integer NOT NULL DEFAULT 0,
  abandoned       integer NOT NULL DEFAULT 0,
  latency_hist    integer[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (subscription_id, bucket)
);
CREATE INDEX attempt_stats_minute_bucket ON attempt_stats_minute (bucket);

-- Watermarks of incremental rollups (the last attempts.id folded in).
CREATE TABLE dashboard_rollups (
  name       text PRIMARY KEY,
  last_id    bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
