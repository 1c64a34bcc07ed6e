// The redrive batch runner. Every tick it steps each running batch
// (lib/redrive/pacer.ts), moving at most rate × elapsed rows back to pending,
// so fresh traffic keeps flowing while a large redrive drains. All of its
// state is in redrive_batches, so it survives restarts of the dashboard and
// the worker, and any number of worker processes may run it at once.
//
//   const pacer = startRedrivePacer({ databaseUrl });   // in the worker
//   await pacer.stop();                                 // on shutdown
import pg from "pg";
import type { Logger } from "pino";
import { createPool } from "../lib/db/pool";
import { advanceBatch, listRunningBatchIds, type StepResult } from "../lib/redrive/pacer";
import { logger } from "../lib/log";
import { connectGuarded, releaseGuarded } from "../lib/db/client";
import { startTimedLoop } from "./timed-loop";

/** A tick of 200 ms moves a 10/s batch two rows at a time: smooth for the receiver, cheap for Postgres. */
export const DEFAULT_PACER_INTERVAL_MS = 200;

export type RedrivePacer = { stop: () => Promise<void>; tick: () => Promise<StepResult[]> };

export function startRedrivePacer(
  opts: { databaseUrl?: string; pool?: pg.Pool; intervalMs?: number; log?: Logger; onStep?: (r: StepResult) => void } = {},
): RedrivePacer {
  const owned = !opts.pool;
  const pool = opts.pool ?? createPool({ url: opts.databaseUrl, max: 2, statementTimeoutMs: 30_000 });
  const interval = opts.intervalMs ?? DEFAULT_PACER_INTERVAL_MS;
  const log = (opts.log ?? logger).child({ component: "redrive-pacer" });
  let stopped = false;

  async function tick(): Promise<StepResult[]> {
    const results: StepResult[] = [];
    const client = await connectGuarded(pool);
    try {
      for (const id of await listRunningBatchIds(client)) {
        if (stopped) break;
        const r = await advanceBatch(client, id);
        if (!r || r.handled === 0) continue;
        results.push(r);
        opts.onStep?.(r);
        log.debug({ batch: id, redriven: r.redriven, skipped: r.skipped }, "redrive step");
        if (r.done) log.info({ batch: id }, "redrive batch done");
      }
    } finally {
      releaseGuarded(client);
    }
    return results;
  }

  const loop = startTimedLoop(tick, interval, { onError: (err) => log.error({ err }, "redrive pacer step failed; retrying next tick") });
  log.info({ intervalMs: interval }, "redrive pacer started");

  return {
    tick,
    async stop() {
      stopped = true;
      await loop.stop();
      if (owned) await pool.end().catch(() => {});
    },
  };
}
