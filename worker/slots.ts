// The worker's claimed rows and the held-slot scheduler. A claim returns, per
// subscription, the rows that may go on the wire now (its free slots) and
// prefetched rows beyond them: one per request this worker already has on the
// wire to that subscription (lib/ledger/sql/claim.ts explains why the
// subscription's max_concurrency still holds). A prefetched row is held until
// one of this worker's requests to its subscription finishes, then takes that
// request's slot, so a freed slot is refilled without waiting for the next claim.
import type { ClaimedRow } from "../lib/ledger/sql/claim";

/** A claimed row in this worker: on the wire (started), about to be, or held (prefetched, `heldAt` set). */
export type InFlight = { row: ClaimedRow; started: boolean; heldAt?: number };

export class Slots {
  /** One entry per claim (after a reap this worker may hold a newer claim of the same row). */
  readonly inflight = new Set<InFlight>();
  /** Prefetched rows per subscription, oldest first. */
  private readonly held = new Map<string, InFlight[]>();
  /**
   * Per subscription, this worker's requests that finished with nothing held
   * to take their slot since the current statement was sent: the statement
   * could not count those slots free, so rows it brings back held may take them.
   */
  private readonly credits = new Map<string, number>();

  constructor(
    private readonly opts: {
      /** A held row older than half of this is released unsent rather than sent. */
      leaseSlackMs: number;
      /** Puts a row on the wire. */
      run: (entry: InFlight) => void;
      /** Returns a row that will never be sent to its prior state. */
      release: (entry: InFlight) => void;
      stopping: () => boolean;
    },
  ) {}

  get size() {
    return this.inflight.size;
  }

  /** A statement is about to be sent: slots freed until now are free in its snapshot. */
  clearCredits() {
    this.credits.clear();
  }

  /** Each subscription's first `slotsFree` rows go on the wire now; the rest are held for its next finished request. */
  place(claimed: ClaimedRow[]) {
    const free = new Map<string, number>();
    for (const row of claimed) {
      const entry: InFlight = { row, started: false };
      this.inflight.add(entry);
      const left = free.get(row.subscriptionId) ?? row.slotsFree;
      if (left > 0) {
        free.set(row.subscriptionId, left - 1);
        this.opts.run(entry);
      } else {
        entry.heldAt = performance.now();
        const q = this.held.get(row.subscriptionId);
        if (q) q.push(entry);
        else this.held.set(row.subscriptionId, [entry]);
      }
    }
    for (const [sub, n] of this.credits) for (let i = 0; i < n && this.takeHeld(sub); i++);
  }

  /** A request is off the wire (or never went): its slot passes to the subscription's oldest held row. */
  finished(entry: InFlight) {
    this.inflight.delete(entry);
    if (this.opts.stopping()) return;
    const sub = entry.row.subscriptionId;
    if (!this.takeHeld(sub)) this.credits.set(sub, (this.credits.get(sub) ?? 0) + 1);
  }

  /**
   * Sends the subscription's oldest held row, if any. One held longer than half
   * the lease slack is released unsent instead: its request could otherwise
   * outlive the lease and be claimed again while still on the wire.
   */
  private takeHeld(sub: string): boolean {
    const q = this.held.get(sub);
    const entry = q?.shift();
    if (!entry) return false;
    if (q!.length === 0) this.held.delete(sub);
    const heldFor = performance.now() - entry.heldAt!;
    entry.heldAt = undefined;
    if (heldFor > this.opts.leaseSlackMs / 2) {
      this.inflight.delete(entry);
      this.opts.release(entry);
      return this.takeHeld(sub);
    }
    this.opts.run(entry);
    return true;
  }

  /** Ids of the held rows (the claim counts them as this worker's, off the wire). */
  heldIds(): string[] {
    const ids: string[] = [];
    for (const q of this.held.values()) for (const e of q) ids.push(e.row.id);
    return ids;
  }

  /** Rows claimed but not on the wire (held, or waiting on a rate limit or secrets). */
  unsent(): InFlight[] {
    return [...this.inflight].filter((e) => !e.started);
  }

  /** Rows whose request went on the wire and has not finished. */
  started(): InFlight[] {
    return [...this.inflight].filter((e) => e.started);
  }

  clear() {
    this.inflight.clear();
    this.held.clear();
  }
}
