// The redrive batch runner. Every tick it steps each running batch
// (lib/redrive/pacer.ts), moving at most rate × elapsed rows back to pending,
// so fresh traffic keeps flowing while a large redrive drains. All of its
// state is in redrive_batches, so it survives restarts of the dashboard and
// the worker, and any number of worker processes may run it at once.
//
// Every few seconds it also settles a few finished batches (settleFinishedBatches):
// a batch is done once every item is back in the queue (or cancelled, when the
// items already moved still go out), settled once none of its deliveries is
// still on its way, so the Redrives list counts what is still on its way only
// for the done and cancelled batches not yet settled.
//
//   const pacer = startRedrivePacer({ databaseUrl });   // in the worker
//   await pacer.stop();                                 // on shutdown
import pg from "pg";
import type { Logger } from "pino";
import { createPool } from "../lib/db/pool";
import { advanceBatch, listRunningBatchIds, type StepResult } from "../lib/redrive/pacer";
import { settleFinishedBatches, type SettleCursor } from "../lib/ledger/sql/recover";
import { logger } from "../lib/log";
import { connectGuarded, releaseGuarded } from "../lib/db/client";
import { startTimedLoop } from "./timed-loop";
import { dbBackoff } from "../lib/db/wait";
import { isDatabaseUnavailable } from "../lib/db/unavailable";

/** A tick of 200 ms moves a 10/s batch two rows at a time: smooth for the receiver, cheap for Postgres. */
export const DEFAULT_PACER_INTERVAL_MS = 200;

/**
 * A round of settling every 5 s looks at 5 done or cancelled batches (settleFinishedBatches): each look reads the batch's items last
 * first and stops at the first delivery still on its way, where the next look starts, so a batch's items are read about
 * once in all (10,000 items: 0.1 to 0.2 s on a laptop's database, once). Batches with deliveries on their way for long
 * (retrying for days) are looked at in turn, so they do not hold back newer ones.
 */
const SETTLE_INTERVAL_MS = 5_000;
const SETTLE_PER_ROUND = 5;

export type RedrivePacer = { stop: () => Promise<void>; tick: () => Promise<StepResult[]> };

export function startRedrivePacer(
  opts: { databaseUrl?: string; pool?: pg.Pool; intervalMs?: number; log?: Logger; onStep?: (r: StepResult) => void } = {},
): RedrivePacer {
  const owned = !opts.pool;
  const pool = opts.pool ?? createPool({ url: opts.databaseUrl, max: 2, statementTimeoutMs: 30_000 });
  const interval = opts.intervalMs ?? DEFAULT_PACER_INTERVAL_MS;
  const log = (opts.log ?? logger).child({ component: "redrive-pacer" });
  let stopped = false;
  let settleAfter: SettleCursor | null = null;
  let settledAt = -Infinity;

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
      if (!stopped && Date.now() - settledAt >= SETTLE_INTERVAL_MS) {
        settledAt = Date.now();
        const { looked } = await settleFinishedBatches(client, { after: settleAfter, limit: SETTLE_PER_ROUND });
        const last = looked.at(-1);
        settleAfter = looked.length < SETTLE_PER_ROUND || !last ? null : { at: last.at, id: last.id };
        for (const b of looked) if (b.settled) log.debug({ batch: b.id }, "redrive batch settled: none of its deliveries is on its way");
      }
    } finally {
      releaseGuarded(client);
    }
    return results;
  }

  // A tick every 200 ms would log every 200 ms while a step keeps failing (a database restart: five stacks a
  // second). Failures back off as the claim loop's do, and a database that is away is said once per outage.
  let failures = 0;
  let databaseAway = false;
  const onError = (err: unknown) => {
    failures++;
    const retryInMs = dbBackoff(failures);
    if (!isDatabaseUnavailable(err)) log.error({ err, retryInMs }, "redrive pacer step failed; retrying");
    else if (!databaseAway) log.warn({ err: (err as Error).message, retryInMs }, "redrive pacer: database unavailable; retrying with backoff");
    databaseAway ||= isDatabaseUnavailable(err);
  };
  const tickOrReset = async () => {
    const results = await tick();
    if (databaseAway) log.info({ failures }, "redrive pacer: database reachable again");
    failures = 0;
    databaseAway = false;
    return results;
  };
  const loop = startTimedLoop(tickOrReset, interval, { onError, nextDelayMs: () => (failures > 0 ? Math.max(interval, dbBackoff(failures)) : interval) });
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
