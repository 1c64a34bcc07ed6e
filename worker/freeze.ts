// The worker's side of a partition freeze (lib/ledger/sql/freeze.ts): which
// deliveries months to leave out of its statements, reloaded on a NOTIFY, on
// every (re)connection of the LISTEN client and on the heartbeat, and the
// acknowledgement retention waits for.
import type pg from "pg";
import type { Logger } from "pino";
import { ackFreeze, loadFreezes, type Freeze } from "../lib/ledger/sql/freeze";

export class FreezeWatch {
  private freezes: Freeze[] = [];
  private acked = 0;
  private loading: Promise<void> | null = null;
  private again = false;
  /** Resolves once the freezes have been read (or the first read failed): the first cycle waits for it. */
  readonly ready: Promise<void>;

  constructor(
    private readonly o: { pool: pg.Pool; workerId: string; log: Logger; /** Wakes the claim loop (a freeze begun, counted or ended). */ onChange: () => void },
  ) {
    this.ready = this.reload();
  }

  /**
   * The months frozen now. The claim loop leaves them out of its statement,
   * holds their rows' results, and claims nothing while one of them has its
   * in-flight rows not yet counted (inFlight null).
   */
  get active(): readonly Freeze[] {
    return this.freezes;
  }

  /** Reads the freezes again; concurrent calls share one read, and one more follows if asked meanwhile. */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          const next = await loadFreezes(this.o.pool);
          const changed = JSON.stringify(next) !== JSON.stringify(this.freezes);
          this.freezes = next;
          if (changed) this.o.onChange();
        } catch (err) {
          this.o.log.warn({ err: (err as Error).message }, "could not read partition freezes; keeping the last known");
        }
      } while (this.again);
      this.loading = null;
    })();
    return this.loading;
  }

  /**
   * Called by the claim loop at the top of a cycle, when none of its earlier
   * statements is running: acknowledges the newest freeze, whose month every
   * statement from here on leaves out.
   */
  async acknowledge(): Promise<void> {
    const gen = this.freezes.reduce((m, f) => Math.max(m, f.gen), 0);
    if (gen <= this.acked) return;
    if (await ackFreeze(this.o.pool, this.o.workerId, gen)) this.acked = gen;
  }
}
