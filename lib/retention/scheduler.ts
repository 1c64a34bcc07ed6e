// The daily retention run, from the worker. Every worker process runs this
// loop; the run itself takes the advisory lock and re-checks, under it, when
// the last scheduled run started, so however many workers there are, the
// ledger sees one run a day. The policy is checked when the loop starts: a
// malformed HOOKLEDGER_RETENTION_DAYS stops the worker with its message.
//
//   const retention = startRetentionScheduler({ databaseUrl, log });   // in the worker
//   await retention.stop();                                           // on shutdown: stops between batches
import "server-only";
import type { Logger } from "pino";
import { createPool } from "../db/pool";
import { logger } from "../log";
import { retentionFromEnv } from "./policy";
import { runRetention, type RetentionReport } from "./run-retention";

export const RETENTION_EVERY_MS = 24 * 3600_000;
/** How often a worker looks whether the daily run is due: cheap (one indexed read), and a late run is at most this late. */
export const RETENTION_CHECK_MS = 15 * 60_000;

export type RetentionScheduler = { stop: () => Promise<void>; tick: () => Promise<RetentionReport | null> };

export function startRetentionScheduler(
  opts: { databaseUrl?: string; log?: Logger; checkMs?: number; everyMs?: number; firstCheckMs?: number; batch?: number } = {},
): RetentionScheduler {
  retentionFromEnv();
  const log = (opts.log ?? logger).child({ component: "retention" });
  // Batches are bounded, so a statement never runs long; the timeout is a backstop.
  const pool = createPool({ url: opts.databaseUrl, max: 2, statementTimeoutMs: 60_000 });
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<RetentionReport | null> | undefined;

  async function tick(): Promise<RetentionReport | null> {
    const r = await runRetention(pool, null, {
      trigger: "schedule",
      actor: "system",
      signal: abort.signal,
      unlessRanWithinMs: opts.everyMs ?? RETENTION_EVERY_MS,
      batch: opts.batch,
    });
    if (r) log.info({ run: r.id, deliveries: r.deliveries, attempts: r.attempts, events: r.events, expunged: r.expunged, ms: r.durationMs }, "retention run finished");
    return r;
  }

  function schedule(ms: number) {
    if (abort.signal.aborted) return;
    timer = setTimeout(() => {
      running = tick()
        .catch((err) => {
          log.error({ err }, "retention run failed; its record says so, and the next check tries again");
          return null;
        })
        .finally(() => {
          running = undefined;
          schedule(opts.checkMs ?? RETENTION_CHECK_MS);
        });
    }, ms);
    timer.unref?.();
  }
  schedule(opts.firstCheckMs ?? 60_000);

  return {
    tick,
    stop: async () => {
      abort.abort();
      if (timer) clearTimeout(timer);
      await running;
      await pool.end().catch(() => {});
    },
  };
}
