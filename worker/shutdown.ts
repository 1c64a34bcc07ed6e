// Stopping a worker: no more claims; requests on the wire get the grace
// period to finish and their results are written; rows never sent go back to
// their prior state untouched; requests still on the wire at the end are
// aborted and their rows returned to due as abandoned (ambiguous: the request
// may have been applied). If the database is away, what cannot be written is
// left to the reaper, as after a crash.
import type pg from "pg";
import type { Logger } from "pino";
import { abandonLeases } from "../lib/ledger/sql/abandon-leases";
import { releaseUnsent } from "../lib/ledger/sql/release-unsent";
import { markStopped } from "./heartbeat";
import type { WorkListener } from "./listen";
import type { ResultQueue } from "./results";
import type { Sender } from "../lib/net/sender";
import type { Slots } from "./slots";
import { sleep } from "./wakeup";

/** After the grace period: how long the last results may take to be written (the database may be away). */
const FINAL_WRITE_MS = 3_000;

export type ShutdownContext = {
  workerId: string;
  log: Logger;
  pool: pg.Pool;
  sender: Sender;
  slots: Slots;
  results: ResultQueue;
  listener: WorkListener;
  shutdownGraceMs: number;
  /** Aborted: the grace period ends now. */
  hurried: AbortSignal;
  /** Aborts the rows not yet on the wire (rate-limit or secret waits end unsent). */
  holding: AbortController;
  /** Resolves when the claim loop has returned. */
  loopDone: Promise<void> | null;
};

/** Runs once the worker is marked stopping and its timers are cleared. */
export async function shutdown(w: ShutdownContext): Promise<void> {
  await w.loopDone;
  const graceUntil = Date.now() + w.shutdownGraceMs;
  // Not yet on the wire (waiting on a rate limit): released untouched at once.
  const unsent = w.slots.unsent();
  w.holding.abort();
  w.log.info({ inFlight: w.slots.size - unsent.length, graceMs: w.shutdownGraceMs }, "stopping: waiting for in-flight requests");
  while (w.slots.started().length > 0 && Date.now() < graceUntil && !w.hurried.aborted) {
    await sleep(25);
    await w.results.drain(graceUntil); // answers that came in meanwhile, so their leases are not held to the end
  }
  const late = w.slots.started();
  if (late.length) {
    w.sender.abortAll();
    await sleep(50); // let aborted sends settle before the last flush
  }
  await w.results.drain(Date.now() + FINAL_WRITE_MS);
  try {
    const released = await releaseUnsent(
      w.pool,
      w.workerId,
      unsent.map((e) => e.row),
    );
    const abandoned = late.length
      ? await abandonLeases(w.pool, { errorClass: "shutdown", owner: w.workerId, ids: late.map((e) => e.row.id), claimTokens: late.map((e) => e.row.claimToken) })
      : [];
    await markStopped(w.pool, w.workerId);
    w.log.info({ released, abandoned: abandoned.length }, "worker stopped");
  } catch (err) {
    w.log.warn({ err: (err as Error).message }, "could not release leases at shutdown; the reaper will return them when they expire");
  }
  w.slots.clear();
  await w.listener.close();
  await w.sender.close();
  await w.pool.end().catch(() => {});
}
