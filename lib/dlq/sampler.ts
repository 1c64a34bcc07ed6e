// The dashboard's sampler: every ~15 s it records the DLQ's depth and oldest age
// (dlq_samples, dlq_sample_groups) and folds new attempts into per-minute stats
// (attempt_stats_minute) and their hourly sums (attempt_stats_hour). The DLQ
// charts and subscription health read only these tables, so no dashboard
// request scans the queue or the attempts.
//
// It runs inside each Next server process (instrumentation.ts). Several
// dashboard instances are safe: each step takes a transaction-scoped advisory
// lock and the DLQ step also skips when a fresh sample already exists, so
// instances share one sample per interval instead of each taking their own.
import type pg from "pg";
import { getPool } from "../db/pool";
import { logger } from "../log";
import { latencyBucket, LATENCY_BUCKETS, STATS_HOUR_MS, sumHistogramsSql } from "../dashboard/latency";
import { connectGuarded, releaseGuarded } from "../db/client";

const DLQ_LOCK = 7_431_401;
const ROLLUP_LOCK = 7_431_402;
export const SAMPLE_INTERVAL_MS = Number(process.env.HOOKLEDGER_SAMPLE_INTERVAL_MS ?? 15_000);
// Rows attempted within this many seconds may belong to a transaction that has
// not committed yet (ids are taken at insert, visible at commit); the rollup
// leaves them for the next tick so no attempt is skipped. Attempt writes are
// single short statements, so 10 s is ample.
const SETTLE_SECONDS = 10;
const ROLLUP_CHUNK = 50_000;
const DLQ_RETENTION = "7 days";
const GROUP_RETENTION = "2 days";
const STATS_RETENTION = "30 days";

export type DlqSampleResult = { sampled: boolean; depth?: number };

/** Takes one DLQ sample unless another instance took one within minGapMs. */
export async function sampleDlq(pool: pg.Pool = getPool(), opts: { minGapMs?: number; now?: Date } = {}): Promise<DlqSampleResult> {
  const minGapMs = opts.minGapMs ?? SAMPLE_INTERVAL_MS / 2;
  const client = await connectGuarded(pool);
  try {
    await client.query("BEGIN");
    const { rows: lock } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [DLQ_LOCK]);
    if (!lock[0].ok) {
      await client.query("ROLLBACK");
      return { sampled: false };
    }
    const at = opts.now ?? new Date();
    const { rows: last } = await client.query<{ fresh: boolean }>(
      "SELECT max(sampled_at) > $1::timestamptz - make_interval(secs => $2::float / 1000) AS fresh FROM dlq_samples",
      [at, minGapMs],
    );
    if (last[0].fresh) {
      await client.query("ROLLBACK");
      return { sampled: false };
    }
    // One pass over the dead-letter rows (the deliveries_dlq partial index);
    // grouped the way a redrive filters.
    const { rows } = await client.query<{ depth: number }>(
      `WITH g AS (
         SELECT subscription_id, dead_letter_reason AS reason, last_error_class AS error_class,
                last_status_code AS status_code, count(*)::int AS depth, min(dead_lettered_at) AS oldest_at
         FROM deliveries WHERE state = 'dead_letter'
         GROUP BY 1, 2, 3, 4
       ), total AS (
         INSERT INTO dlq_samples (sampled_at, depth, oldest_at)
         SELECT $1, coalesce(sum(depth), 0)::int, min(oldest_at) FROM g
         RETURNING depth
       ), groups AS (
         INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
         SELECT $1, subscription_id, reason, error_class, status_code, depth, oldest_at FROM g
       )
       SELECT depth FROM total`,
      [at],
    );
    await client.query(`DELETE FROM dlq_samples WHERE sampled_at < $1::timestamptz - interval '${DLQ_RETENTION}'`, [at]);
    await client.query(`DELETE FROM dlq_sample_groups WHERE sampled_at < $1::timestamptz - interval '${GROUP_RETENTION}'`, [at]);
    await client.query("COMMIT");
    return { sampled: true, depth: rows[0].depth };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    releaseGuarded(client);
  }
}

/**
 * Recomputes attempt_stats_hour rows from attempt_stats_minute: the given
 * (subscription, UTC hour) pairs, or every hour when `keys` is null. Each hour
 * row is replaced by the sum of its minute rows, never incremented, so it is
 * right whatever it held before (a rollup from a version that did not know
 * the hour table, a hand-fixed minute row). Run inside the rollup's
 * transaction: readers never see the two tables disagree.
 */
export async function refreshHourlyStats(client: pg.PoolClient | pg.Pool, keys: { subs: string[]; hours: Date[] } | null): Promise<void> {
  const hour = "date_bin('1 hour', m.bucket, TIMESTAMPTZ '2000-01-01 00:00:00+00')";
  const source = keys
    ? `FROM unnest($1::text[], $2::timestamptz[]) AS k(sub, hour)
       JOIN attempt_stats_minute m ON m.subscription_id = k.sub AND m.bucket >= k.hour AND m.bucket < k.hour + interval '1 hour'`
    : "FROM attempt_stats_minute m";
  await client.query(
    `INSERT INTO attempt_stats_hour AS h (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
     SELECT m.subscription_id, ${hour}, sum(m.attempts), sum(m.delivered), sum(m.retried), sum(m.dead_lettered), sum(m.abandoned),
            ${sumHistogramsSql("m.latency_hist")}
     ${source}
     GROUP BY 1, 2
     ON CONFLICT (subscription_id, bucket) DO UPDATE SET
       attempts = EXCLUDED.attempts, delivered = EXCLUDED.delivered, retried = EXCLUDED.retried,
       dead_lettered = EXCLUDED.dead_lettered, abandoned = EXCLUDED.abandoned, latency_hist = EXCLUDED.latency_hist`,
    keys ? [keys.subs, keys.hours] : [],
  );
}

type Agg = { sub: string; bucket: string; attempts: number; delivered: number; retried: number; dead: number; abandoned: number; hist: number[] };

/**
 * Folds attempts newer than the watermark into attempt_stats_minute (and the
 * hours it touched into attempt_stats_hour), in chunks,
 * each chunk and its watermark in one transaction (so a crash never counts an
 * attempt twice). Returns the number of attempts folded in.
 */
export async function rollupAttemptStats(
  pool: pg.Pool = getPool(),
  opts: { settleSeconds?: number; maxChunks?: number; chunk?: number } = {},
): Promise<number> {
  const settle = opts.settleSeconds ?? SETTLE_SECONDS;
  const chunk = opts.chunk ?? ROLLUP_CHUNK;
  let total = 0;
  for (let i = 0; i < (opts.maxChunks ?? 20); i++) {
    const client = await connectGuarded(pool);
    let folded = 0;
    try {
      await client.query("BEGIN");
      const { rows: lock } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [ROLLUP_LOCK]);
      if (!lock[0].ok) {
        await client.query("ROLLBACK");
        return total;
      }
      await client.query("INSERT INTO dashboard_rollups (name) VALUES ('attempt_stats') ON CONFLICT DO NOTHING");
      const { rows: wm } = await client.query<{ last_id: number }>("SELECT last_id FROM dashboard_rollups WHERE name = 'attempt_stats' FOR UPDATE");
      const from = Number(wm[0].last_id);
      // The highest id such that every attempt up to it is settled (see SETTLE_SECONDS).
      const { rows: r } = await client.query<{ hi: number | null }>(
        `SELECT coalesce(min(id) FILTER (WHERE created_at >= now() - make_interval(secs => $3)) - 1, max(id)) AS hi
         FROM (SELECT id, created_at FROM attempts WHERE id > $1 ORDER BY id LIMIT $2) s`,
        [from, chunk, settle],
      );
      const hi = r[0].hi === null ? from : Number(r[0].hi);
      if (hi <= from) {
        await client.query("ROLLBACK");
        return total;
      }
      const { rows } = await client.query<{ sub: string; bucket: Date; outcome: string; duration_ms: number | null; n: number }>(
        `SELECT subscription_id AS sub, date_trunc('minute', started_at) AS bucket, outcome, duration_ms, count(*)::int AS n
         FROM attempts WHERE id > $1 AND id <= $2
         GROUP BY 1, 2, 3, 4`,
        [from, hi],
      );
      const aggs = new Map<string, Agg>();
      for (const row of rows) {
        const bucket = row.bucket.toISOString();
        const key = `${row.sub}\u0000${bucket}`;
        let a = aggs.get(key);
        if (!a) aggs.set(key, (a = { sub: row.sub, bucket, attempts: 0, delivered: 0, retried: 0, dead: 0, abandoned: 0, hist: new Array(LATENCY_BUCKETS).fill(0) }));
        a.attempts += row.n;
        if (row.outcome === "delivered") a.delivered += row.n;
        else if (row.outcome === "retry") a.retried += row.n;
        else if (row.outcome === "dead_letter") a.dead += row.n;
        else if (row.outcome === "abandoned") a.abandoned += row.n;
        if (row.duration_ms !== null && row.outcome !== "abandoned") a.hist[latencyBucket(row.duration_ms)] += row.n;
        folded += row.n;
      }
      const list = [...aggs.values()];
      if (list.length) {
        await client.query(
          `INSERT INTO attempt_stats_minute AS s (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
           SELECT t.sub, t.bucket, t.a, t.d, t.r, t.x, t.ab, t.h::int[]
           FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[], $8::text[]) AS t(sub, bucket, a, d, r, x, ab, h)
           ON CONFLICT (subscription_id, bucket) DO UPDATE SET
             attempts = s.attempts + EXCLUDED.attempts,
             delivered = s.delivered + EXCLUDED.delivered,
             retried = s.retried + EXCLUDED.retried,
             dead_lettered = s.dead_lettered + EXCLUDED.dead_lettered,
             abandoned = s.abandoned + EXCLUDED.abandoned,
             latency_hist = (SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY o)
                             FROM unnest(s.latency_hist, EXCLUDED.latency_hist) WITH ORDINALITY AS u(x, y, o))`,
          [
            list.map((a) => a.sub),
            list.map((a) => a.bucket),
            list.map((a) => a.attempts),
            list.map((a) => a.delivered),
            list.map((a) => a.retried),
            list.map((a) => a.dead),
            list.map((a) => a.abandoned),
            list.map((a) => `{${a.hist.join(",")}}`),
          ],
        );
        const hours = new Map<string, { sub: string; hour: Date }>();
        for (const a of list) {
          const hour = new Date(Math.floor(Date.parse(a.bucket) / STATS_HOUR_MS) * STATS_HOUR_MS);
          hours.set(`${a.sub}\u0000${hour.getTime()}`, { sub: a.sub, hour });
        }
        const touched = [...hours.values()];
        await refreshHourlyStats(client, { subs: touched.map((t) => t.sub), hours: touched.map((t) => t.hour) });
      }
      await client.query("UPDATE dashboard_rollups SET last_id = $1, updated_at = now() WHERE name = 'attempt_stats'", [hi]);
      await client.query(`DELETE FROM attempt_stats_minute WHERE bucket < now() - interval '${STATS_RETENTION}'`);
      await client.query(`DELETE FROM attempt_stats_hour WHERE bucket < now() - interval '${STATS_RETENTION}'`);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      releaseGuarded(client);
    }
    total += folded;
    if (folded === 0) break;
  }
  return total;
}

/** One tick: a DLQ sample and an attempts rollup. Also what tests and the benchmark call. */
export async function runSamplerOnce(pool: pg.Pool = getPool(), opts: { settleSeconds?: number; minGapMs?: number } = {}) {
  const dlq = await sampleDlq(pool, { minGapMs: opts.minGapMs });
  const folded = await rollupAttemptStats(pool, { settleSeconds: opts.settleSeconds });
  return { dlq, folded };
}

const g = globalThis as unknown as { __hookledgerSampler?: NodeJS.Timeout };

/** Starts the periodic sampler once per process; HOOKLEDGER_SAMPLER=0 turns it off. */
export function startSampler(): void {
  if (g.__hookledgerSampler || process.env.HOOKLEDGER_SAMPLER === "0") return;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      await runSamplerOnce();
    } catch (err) {
      // No database yet, or migrations pending: try again next tick.
      logger.warn({ err: (err as Error).message }, "dashboard sampler tick failed");
    } finally {
      running = false;
    }
  };
  g.__hookledgerSampler = setInterval(tick, SAMPLE_INTERVAL_MS);
  g.__hookledgerSampler.unref();
  setTimeout(tick, 1_000).unref();
}
