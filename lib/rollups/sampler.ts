// The dashboard's sampler: every ~15 s it records the DLQ's depth and oldest age
// (dlq_samples, dlq_sample_groups) and folds new attempts into per-minute stats
// (attempt_stats_minute) and their hourly sums (attempt_stats_hour). The DLQ
// charts, the error-class groups of subscriptions too large to group per
// request, and subscription health read these tables, so no dashboard request
// scans the attempts or a large queue. The DLQ's depth and age now are not the
// sampler's: they are counted per request from the trigger-kept counters
// (lib/dashboard/dead-letters.ts), so they do not lag a write by a tick.
//
// It runs inside each Next server process (instrumentation.ts). Several
// dashboard instances are safe: each step takes a transaction-scoped advisory
// lock and the DLQ step also skips when a fresh sample already exists, so
// instances share one sample per interval instead of each taking their own.
// The statements on the ledger's tables are lib/ledger's (sql/dlq.ts,
// read/attempt-stats.ts); this module holds the schedule, locks and watermark.
import "server-only";
import type pg from "pg";
import { getPool } from "../db/pool";
import { logger } from "../log";
import { envInt } from "../env";
import { latencyBucket, LATENCY_BUCKETS, STATS_HOUR_MS } from "../ledger/read/latency";
import { withTransaction } from "../db/client";
import { hasFreshDlqSample, pruneDlqSamples, takeDlqSample } from "../ledger/sql/dead-letters";
import { addMinuteStats, countAttemptOutcomes, findSettledAttemptId, pruneAttemptStats, refreshHourlyStats, type MinuteStats } from "../ledger/read/attempt-stats";

export { refreshHourlyStats };

const DLQ_LOCK = 7_431_401;
export const ROLLUP_LOCK = 7_431_402;
const SAMPLE_INTERVAL_MS = envInt("HOOKLEDGER_SAMPLE_INTERVAL_MS", { default: 15_000, min: 1_000, max: 3_600_000 });
// Rows attempted within this many seconds may belong to a transaction that has
// not committed yet (ids are taken at insert, visible at commit); the rollup
// leaves them for the next tick so no attempt is skipped. Attempt writes are
// single short statements, so 10 s is ample.
const SETTLE_SECONDS = 10;
const ROLLUP_CHUNK = 50_000;
const DLQ_RETENTION = "7 days";
const GROUP_RETENTION = "2 days";
const STATS_RETENTION = "30 days";

/**
 * The notices of dead letters waiting a day read the newest DLQ sample (lib/notify/ingest.ts), which the dashboard
 * takes every HOOKLEDGER_SAMPLE_INTERVAL_MS. With no dashboard running (workers alone), the worker's notifier takes one
 * itself when none is this recent; with a dashboard, its samples are always more recent and this costs one read.
 */
export const NOTIFIER_DLQ_SAMPLE_MINUTES = 5;

/**
 * The longest wait between two samples while any of hookledger runs: a dashboard samples every
 * HOOKLEDGER_SAMPLE_INTERVAL_MS, workers alone every NOTIFIER_DLQ_SAMPLE_MINUTES, each tick a moment late under load.
 * A longer stretch without one means nothing was running (or the database could not be reached): the DLQ charts show
 * it as a gap rather than draw the last sample across it.
 */
export const DLQ_SAMPLE_MAX_GAP_SECONDS = 2 * Math.max(SAMPLE_INTERVAL_MS / 1000, NOTIFIER_DLQ_SAMPLE_MINUTES * 60);

export type DlqSampleResult = { sampled: boolean; depth?: number };

/** Takes one DLQ sample unless another instance took one within minGapMs. */
export async function sampleDlq(pool: pg.Pool = getPool(), opts: { minGapMs?: number; now?: Date } = {}): Promise<DlqSampleResult> {
  const minGapMs = opts.minGapMs ?? SAMPLE_INTERVAL_MS / 2;
  return withTransaction(pool, async (client) => {
    const { rows: lock } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [DLQ_LOCK]);
    if (!lock[0].ok) return { sampled: false };
    const at = opts.now ?? new Date();
    if (await hasFreshDlqSample(client, at, minGapMs)) return { sampled: false };
    // One pass over the dead-letter rows (the deliveries_dlq partial index);
    // grouped the way a redrive filters.
    const depth = await takeDlqSample(client, at);
    await pruneDlqSamples(client, at, DLQ_RETENTION, GROUP_RETENTION);
    return { sampled: true, depth };
  });
}

type Agg = MinuteStats;

/**
 * Folds attempts newer than the watermark into attempt_stats_minute (and the
 * hours it touched into attempt_stats_hour), in chunks,
 * each chunk and its watermark in one transaction (so a crash never counts an
 * attempt twice). Returns the number of attempts folded in.
 */
export async function rollupAttemptStats(pool: pg.Pool = getPool(), opts: { settleSeconds?: number; maxChunks?: number; chunk?: number } = {}): Promise<number> {
  const settle = opts.settleSeconds ?? SETTLE_SECONDS;
  const chunk = opts.chunk ?? ROLLUP_CHUNK;
  let total = 0;
  for (let i = 0; i < (opts.maxChunks ?? 20); i++) {
    // null: another instance holds the lock, or nothing new has settled.
    const folded = await withTransaction(pool, async (client): Promise<number | null> => {
      const { rows: lock } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [ROLLUP_LOCK]);
      if (!lock[0].ok) return null;
      await client.query("INSERT INTO dashboard_rollups (name) VALUES ('attempt_stats') ON CONFLICT DO NOTHING");
      const { rows: wm } = await client.query<{ last_id: number }>("SELECT last_id FROM dashboard_rollups WHERE name = 'attempt_stats' FOR UPDATE");
      const from = Number(wm[0].last_id);
      // The highest id such that every attempt up to it is settled (see SETTLE_SECONDS).
      const settled = await findSettledAttemptId(client, from, chunk, settle);
      const hi = settled === null ? from : settled;
      if (hi <= from) return null;
      const rows = await countAttemptOutcomes(client, from, hi);
      let n = 0;
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
        n += row.n;
      }
      const list = [...aggs.values()];
      if (list.length) {
        await addMinuteStats(client, list);
        const hours = new Map<string, { sub: string; hour: Date }>();
        for (const a of list) {
          const hour = new Date(Math.floor(Date.parse(a.bucket) / STATS_HOUR_MS) * STATS_HOUR_MS);
          hours.set(`${a.sub}\u0000${hour.getTime()}`, { sub: a.sub, hour });
        }
        const touched = [...hours.values()];
        await refreshHourlyStats(client, { subs: touched.map((t) => t.sub), hours: touched.map((t) => t.hour) });
      }
      await client.query("UPDATE dashboard_rollups SET last_id = $1, updated_at = now() WHERE name = 'attempt_stats'", [hi]);
      await pruneAttemptStats(client, STATS_RETENTION);
      return n;
    });
    total += folded ?? 0;
    if (!folded) break;
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
