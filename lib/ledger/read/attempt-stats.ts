// The attempt rollups: attempt_stats_minute (attempts folded per subscription
// and minute, with a latency histogram) and attempt_stats_hour (the sum of an
// hour's minute rows). The sampler (lib/rollups/sampler.ts) writes them under its
// lock and watermark; subscription health, the outcomes chart and the alerts
// page read them, by primary key, instead of scanning attempts.
import "server-only";
import { execute, queryRows, raw, sql, type LedgerDb } from "./db";
import { STATS_HOUR_MS, sumHistogramsSql } from "./latency";

const hist = (column: string) => raw(sumHistogramsSql(column));

/**
 * Recomputes attempt_stats_hour rows from attempt_stats_minute: the given
 * (subscription, UTC hour) pairs, or every hour when `keys` is null. Each hour
 * row is replaced by the sum of its minute rows, never incremented, so it is
 * right whatever it held before. Run inside the rollup's transaction: readers
 * never see the two tables disagree.
 */
export async function refreshHourlyStats(db: LedgerDb, keys: { subs: string[]; hours: Date[] } | null): Promise<void> {
  const source = keys
    ? sql`FROM unnest(${keys.subs}::text[], ${keys.hours}::timestamptz[]) AS k(sub, hour)
          JOIN attempt_stats_minute m ON m.subscription_id = k.sub AND m.bucket >= k.hour AND m.bucket < k.hour + interval '1 hour'`
    : sql`FROM attempt_stats_minute m`;
  await execute(
    db,
    sql`INSERT INTO attempt_stats_hour AS h (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
        SELECT m.subscription_id, date_bin('1 hour', m.bucket, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
               sum(m.attempts), sum(m.delivered), sum(m.retried), sum(m.dead_lettered), sum(m.abandoned), ${hist("m.latency_hist")}
        ${source}
        GROUP BY 1, 2
        ON CONFLICT (subscription_id, bucket) DO UPDATE SET
          attempts = EXCLUDED.attempts, delivered = EXCLUDED.delivered, retried = EXCLUDED.retried,
          dead_lettered = EXCLUDED.dead_lettered, abandoned = EXCLUDED.abandoned, latency_hist = EXCLUDED.latency_hist`,
  );
}

/**
 * The highest attempt id after `fromId` (at most `chunk` ahead) such that every
 * attempt up to it is settled: rows younger than `settleSeconds` may belong to
 * a transaction not yet committed, so the rollup stops before the first of
 * them. Null when there is nothing new.
 */
export async function findSettledAttemptId(db: LedgerDb, fromId: number, chunk: number, settleSeconds: number): Promise<number | null> {
  const rows = await queryRows<{ hi: number | bigint | null }>(
    db,
    sql`SELECT coalesce(min(id) FILTER (WHERE created_at >= now() - make_interval(secs => ${settleSeconds}::float8)) - 1, max(id)) AS hi
          FROM (SELECT id, created_at FROM attempts WHERE id > ${fromId}::bigint ORDER BY id LIMIT ${chunk}::int) s`,
  );
  return rows[0]?.hi === null || rows[0]?.hi === undefined ? null : Number(rows[0].hi);
}

export type AttemptOutcomeCount = { sub: string; bucket: Date; outcome: string; duration_ms: number | null; n: number };

/** Attempts with fromId < id <= toId counted by subscription, minute, outcome and duration. */
export async function countAttemptOutcomes(db: LedgerDb, fromId: number, toId: number): Promise<AttemptOutcomeCount[]> {
  return queryRows<AttemptOutcomeCount>(
    db,
    sql`SELECT subscription_id AS sub, date_trunc('minute', started_at) AS bucket, outcome, duration_ms, count(*)::int AS n
          FROM attempts WHERE id > ${fromId}::bigint AND id <= ${toId}::bigint
         GROUP BY 1, 2, 3, 4`,
  );
}

export type MinuteStats = { sub: string; bucket: string; attempts: number; delivered: number; retried: number; dead: number; abandoned: number; hist: number[] };

/** Adds counts and histograms to attempt_stats_minute rows (created when missing). */
export async function addMinuteStats(db: LedgerDb, list: MinuteStats[]): Promise<void> {
  if (list.length === 0) return;
  await execute(
    db,
    sql`INSERT INTO attempt_stats_minute AS s (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
        SELECT t.sub, t.bucket, t.a, t.d, t.r, t.x, t.ab, t.h::int[]
          FROM unnest(${list.map((a) => a.sub)}::text[], ${list.map((a) => a.bucket)}::timestamptz[], ${list.map((a) => a.attempts)}::int[],
                      ${list.map((a) => a.delivered)}::int[], ${list.map((a) => a.retried)}::int[], ${list.map((a) => a.dead)}::int[],
                      ${list.map((a) => a.abandoned)}::int[], ${list.map((a) => `{${a.hist.join(",")}}`)}::text[])
               AS t(sub, bucket, a, d, r, x, ab, h)
        ON CONFLICT (subscription_id, bucket) DO UPDATE SET
          attempts = s.attempts + EXCLUDED.attempts,
          delivered = s.delivered + EXCLUDED.delivered,
          retried = s.retried + EXCLUDED.retried,
          dead_lettered = s.dead_lettered + EXCLUDED.dead_lettered,
          abandoned = s.abandoned + EXCLUDED.abandoned,
          latency_hist = (SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY o)
                          FROM unnest(s.latency_hist, EXCLUDED.latency_hist) WITH ORDINALITY AS u(x, y, o))`,
  );
}

/** Drops minute and hour rows older than `retention` (an interval, e.g. '30 days'). */
export async function pruneAttemptStats(db: LedgerDb, retention: string): Promise<void> {
  await execute(db, sql`DELETE FROM attempt_stats_minute WHERE bucket < now() - ${retention}::interval`);
  await execute(db, sql`DELETE FROM attempt_stats_hour WHERE bucket < now() - ${retention}::interval`);
}

export type StatRow = { subscription_id: string; attempts: number; delivered: number; hist: number[] | null };

/**
 * Per-subscription attempt totals and summed latency histograms since `since`:
 * whole UTC hours from attempt_stats_hour, the partial hour before the first
 * whole one from attempt_stats_minute (both by primary key). The same sums as
 * reading every minute row since `since`, because an hour row is the sum of
 * its minute rows; one row per subscription leaves the database.
 */
export async function findAttemptStatsSince(db: LedgerDb, ids: string[], since: Date): Promise<Map<string, StatRow>> {
  const firstWholeHour = new Date(Math.ceil(since.getTime() / STATS_HOUR_MS) * STATS_HOUR_MS);
  const rows = await queryRows<StatRow>(
    db,
    sql`SELECT subscription_id, sum(attempts)::int AS attempts, sum(delivered)::int AS delivered, ${hist("latency_hist")} AS hist
          FROM (
            SELECT subscription_id, attempts, delivered, latency_hist FROM attempt_stats_minute
             WHERE subscription_id = ANY(${ids}::text[]) AND bucket >= ${since} AND bucket < ${firstWholeHour}
            UNION ALL
            SELECT subscription_id, attempts, delivered, latency_hist FROM attempt_stats_hour
             WHERE subscription_id = ANY(${ids}::text[]) AND bucket >= ${firstWholeHour}
          ) w
         GROUP BY subscription_id`,
  );
  return new Map(rows.map((r) => [r.subscription_id, r]));
}

export type OutcomePoint = { at: Date; delivered: number; retried: number; dead_lettered: number; abandoned: number };

/** One subscription's outcomes since `since` in buckets of `bucketMinutes` (empty buckets absent). */
export async function findOutcomeSeries(db: LedgerDb, subscriptionId: string, since: Date, bucketMinutes: number): Promise<OutcomePoint[]> {
  return queryRows<OutcomePoint>(
    db,
    sql`SELECT date_bin(make_interval(mins => ${bucketMinutes}::int), bucket, TIMESTAMPTZ '2000-01-01') AS at,
               sum(delivered)::int AS delivered, sum(retried)::int AS retried, sum(dead_lettered)::int AS dead_lettered, sum(abandoned)::int AS abandoned
          FROM attempt_stats_minute WHERE subscription_id = ${subscriptionId} AND bucket >= ${since}
         GROUP BY 1 ORDER BY 1`,
  );
}

export type FailureWindow = { subscription_id: string; attempts: number; failed: number; thirds: (number | null)[] };

/**
 * Failure share per subscription over the last `windowMinutes`, and in each
 * third of the window (null for a third without attempts).
 */
export async function findFailureWindows(db: LedgerDb, windowMinutes: number): Promise<FailureWindow[]> {
  return queryRows<FailureWindow>(
    db,
    sql`SELECT subscription_id, sum(attempts)::int AS attempts, sum(attempts - delivered)::int AS failed,
               ARRAY[
                 sum(attempts - delivered) FILTER (WHERE bucket < w.start + w.third)::float8
                   / nullif(sum(attempts) FILTER (WHERE bucket < w.start + w.third), 0),
                 sum(attempts - delivered) FILTER (WHERE bucket >= w.start + w.third AND bucket < now() - w.third)::float8
                   / nullif(sum(attempts) FILTER (WHERE bucket >= w.start + w.third AND bucket < now() - w.third), 0),
                 sum(attempts - delivered) FILTER (WHERE bucket >= now() - w.third)::float8
                   / nullif(sum(attempts) FILTER (WHERE bucket >= now() - w.third), 0)
               ] AS thirds
          FROM attempt_stats_minute,
               LATERAL (SELECT now() - make_interval(mins => ${windowMinutes}::int) AS start, make_interval(mins => ${windowMinutes}::int) / 3 AS third) w
         WHERE bucket >= w.start
         GROUP BY subscription_id`,
  );
}
