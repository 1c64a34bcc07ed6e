-- Hourly attempt stats beside the per-minute ones (BENCHMARKS.md F3). The
-- subscription health list reads a 24 h window for every subscription; from
-- attempt_stats_minute that is up to 1,440 rows per subscription. Here it is
-- 24 hour rows, plus the minute rows of the window's first, partial hour.
--
-- Same columns as attempt_stats_minute; `bucket` is the UTC hour. Each row is
-- the sum of that hour's minute rows: the rollup (lib/dlq/sampler.ts)
-- recomputes the hours it touched from the minute rows, in the transaction
-- that writes them, so the two tables cannot disagree after a commit.
CREATE TABLE attempt_stats_hour (
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
CREATE INDEX attempt_stats_hour_bucket ON attempt_stats_hour (bucket);

-- The starting rows, from the minute rows, with rollups held off (they write
-- attempt_stats_minute, which SHARE mode blocks) so none is missed.
LOCK TABLE attempt_stats_minute IN SHARE MODE;
INSERT INTO attempt_stats_hour (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
SELECT t.subscription_id, t.hour, t.attempts, t.delivered, t.retried, t.dead_lettered, t.abandoned, coalesce(h.hist, '{}')
FROM (
  SELECT subscription_id, date_bin('1 hour', bucket, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
         sum(attempts)::int AS attempts, sum(delivered)::int AS delivered, sum(retried)::int AS retried,
         sum(dead_lettered)::int AS dead_lettered, sum(abandoned)::int AS abandoned
  FROM attempt_stats_minute GROUP BY 1, 2
) t
LEFT JOIN LATERAL (
  SELECT array_agg(s.n ORDER BY s.o) AS hist
  FROM (SELECT u.o, sum(u.x)::int AS n
        FROM attempt_stats_minute m, unnest(m.latency_hist) WITH ORDINALITY AS u(x, o)
        WHERE m.subscription_id = t.subscription_id AND m.bucket >= t.hour AND m.bucket < t.hour + interval '1 hour'
        GROUP BY u.o) s
) h ON true;
