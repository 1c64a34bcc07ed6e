// The claim loop: one cycle per turn, back to back while there is work. The
// results that came in since the last cycle are written and the next batch is
// claimed in one statement (lib/ledger/sql/write-and-claim.ts), so one commit.
// The loop is the only writer of the hot path: claim and result write never
// run side by side on two connections, where they contended inside Postgres
// for ~25% more CPU per delivery (BENCHMARKS.md F1). What arrives while a
// cycle runs goes with the next one: the group commit.
import type pg from "pg";
import type { Logger } from "pino";
import type { ClaimedRow } from "../lib/ledger/sql/claim";
import { writeAndClaim } from "../lib/ledger/sql/write-and-claim";
import { inFrozen } from "../lib/ledger/sql/freeze";
import type { AttemptResult } from "../lib/ledger/sql/write-results";
import { claimBatchSize } from "../lib/metrics/worker";
import { dbBackoff } from "../lib/db/wait";
import type { WorkerConfig } from "./config";
import type { FreezeWatch } from "./freeze";
import type { RateLimiter } from "./rate-limit";
import type { ResultQueue } from "./results";
import type { SecretsCache } from "./secrets";
import type { Slots } from "./slots";
import { sleep, type Wakeup } from "./wakeup";

export type LoopContext = {
  config: WorkerConfig;
  workerId: string;
  log: Logger;
  pool: pg.Pool;
  wake: Wakeup;
  slots: Slots;
  results: ResultQueue;
  secrets: SecretsCache;
  limiter: RateLimiter;
  /** Deliveries months retention is emptying, left out of every cycle (lib/ledger/sql/freeze.ts). */
  freeze: FreezeWatch;
  stopping: () => boolean;
  /** Resolves when the worker starts stopping: cuts a wait for the database short. */
  stopSignal: Promise<void>;
};

export async function claimLoop(w: LoopContext): Promise<void> {
  const { batchSize, maxInFlight, pollIntervalMs } = w.config;
  let dbFailures = 0;
  // Where the next claim's window of subscriptions starts (lib/ledger/sql/claim.ts nextWindowStart): the subscriptions with queued rows take turns.
  let after = "";
  await w.freeze.ready;
  while (!w.stopping()) {
    // No statement of an earlier cycle is running: a month frozen since is acknowledged, and left out from here on.
    // One view of the freezes for the whole cycle: the statement leaves out exactly the months whose results are held.
    const frozen = w.freeze.active;
    const hold = frozen.length > 0 ? (r: AttemptResult) => inFrozen(r.eventAt, frozen) : undefined;
    try {
      await w.freeze.acknowledge();
    } catch (err) {
      w.log.warn({ err: (err as Error).message }, "could not acknowledge a partition freeze; retrying next cycle");
    }
    const room = maxInFlight - w.slots.size;
    // Claim when a useful batch fits; otherwise only write, or wait for answers to free room.
    const asked = frozen.every((f) => f.inFlight !== null) && (room >= Math.min(batchSize, maxInFlight) / 4 || w.slots.size === 0) ? Math.min(batchSize, room) : 0;
    if (asked === 0 && w.results.ready(hold) === 0) {
      await w.wake.wait(pollIntervalMs);
      continue;
    }
    const batch = w.results.take(hold);
    let claimed: ClaimedRow[];
    w.slots.clearCredits(); // slots freed until now are free in this statement's snapshot
    try {
      const out = await writeAndClaim(
        w.pool,
        w.workerId,
        batch,
        asked > 0
          ? {
              limit: asked,
              perSubscription: w.config.perSubscription,
              leaseSlackSeconds: w.config.leaseSlackMs / 1000,
              excludeSubscriptions: w.limiter.exhausted(),
              answered: w.results.answered(),
              held: w.slots.heldIds(),
              after,
            }
          : null,
        frozen,
      );
      if (dbFailures > 0) w.log.info("database reachable again");
      dbFailures = 0;
      w.results.reportDiscarded(batch, out.applied);
      claimed = out.claimed;
      if (out.after !== undefined) after = out.after;
    } catch (err) {
      w.results.putBack(batch);
      dbFailures++;
      const delay = dbBackoff(dbFailures);
      w.log.warn({ err: (err as Error).message, retryInMs: delay }, `${batch.length > 0 ? "writing results" : "claim"}: database unavailable; retrying`);
      await Promise.race([sleep(delay), w.stopSignal]);
      continue;
    } finally {
      w.results.written();
    }
    if (asked > 0) claimBatchSize.observe(claimed.length);
    if (claimed.length > 0) {
      await w.secrets.refresh(claimed);
      w.slots.place(claimed);
    }
    // Nothing more due (or no room) and no result waiting: sleep until an answer, a NOTIFY or the poll.
    if (w.results.ready(hold) === 0 && claimed.length < asked) await w.wake.wait(pollIntervalMs);
  }
}
