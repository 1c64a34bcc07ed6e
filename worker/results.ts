// The worker's answers waiting to be written. The claim loop writes them in
// the statement that claims the next batch (lib/ledger/sql/write-and-claim.ts),
// so results that arrive while a cycle runs go with the next one: the group
// commit. At shutdown, drain() writes what is left without claiming.
import type pg from "pg";
import type { Logger } from "pino";
import { writeResults, type AttemptResult } from "../lib/ledger/sql/write-results";
import { dbBackoff } from "../lib/db/wait";
import { sleep } from "./wakeup";

/** Results per statement at most. */
const BATCH = 1000;

export class ResultQueue {
  /** Answers whose result is not yet written. */
  private pending: AttemptResult[] = [];
  /** The batch being written now. */
  private writing: AttemptResult[] = [];

  constructor(
    private readonly pool: pg.Pool,
    private readonly workerId: string,
    private readonly log: Logger,
    /** Called on each new result (wakes the claim loop). */
    private readonly onResult: () => void,
  ) {}

  get length() {
    return this.pending.length;
  }

  /** How many results take(hold) would return now. */
  ready(hold?: (r: AttemptResult) => boolean): number {
    if (!hold) return this.pending.length;
    let n = 0;
    for (const r of this.pending) if (!hold(r)) n++;
    return n;
  }

  push(r: AttemptResult) {
    this.pending.push(r);
    this.onResult();
  }

  /**
   * The next batch to write; its rows stay `answered` until written() or
   * putBack(). Results `hold` names stay queued, in order (their rows' month is
   * frozen: worker/freeze.ts).
   */
  take(hold?: (r: AttemptResult) => boolean): AttemptResult[] {
    if (!hold) return (this.writing = this.pending.splice(0, BATCH));
    const out: AttemptResult[] = [];
    const kept: AttemptResult[] = [];
    for (const r of this.pending) (out.length < BATCH && !hold(r) ? out : kept).push(r);
    this.pending = kept;
    return (this.writing = out);
  }

  /** A batch that could not be written goes back to the front. */
  putBack(batch: AttemptResult[]) {
    this.pending.unshift(...batch);
  }

  /** The batch taken last is no longer being written. */
  written() {
    this.writing = [];
  }

  /** Ids of claimed rows whose answer is in and whose result is not yet written. */
  answered(): string[] {
    const ids: string[] = [];
    for (const r of this.writing) ids.push(r.id);
    for (const r of this.pending) ids.push(r.id);
    return ids;
  }

  reportDiscarded(batch: AttemptResult[], applied: AttemptResult[]) {
    if (applied.length < batch.length)
      this.log.warn(
        { lost: batch.filter((r) => !applied.includes(r)).map((r) => r.id) },
        "results for deliveries whose lease this worker no longer held were discarded (the reaper recorded them)",
      );
  }

  /**
   * At shutdown, once the loop has stopped: writes what is left, without
   * claiming, retrying until `until` (epoch ms) at the latest. What cannot be
   * written by then stays unwritten: those leases expire and the reaper
   * records the attempts as ambiguous.
   */
  async drain(until: number) {
    let failures = 0;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH);
      try {
        this.reportDiscarded(batch, await writeResults(this.pool, this.workerId, batch));
        failures = 0;
      } catch (err) {
        this.pending.unshift(...batch);
        const wait = Math.min(dbBackoff(++failures), until - Date.now());
        this.log.warn(
          { err: (err as Error).message, pending: this.pending.length },
          wait > 0 ? "could not write results; retrying" : "could not write results; giving up",
        );
        if (wait <= 0) return;
        await sleep(wait);
      }
    }
  }
}
