// The claim loop's alarm clock: an answer, a NOTIFY or a reap pokes it; the
// poll interval is its timeout.

/** Resolves on poke() or after a timeout, whichever comes first. A poke with no one waiting is kept for the next wait. */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private pending = false;
  poke() {
    if (this.resolve) {
      const r = this.resolve;
      this.resolve = null;
      r();
    } else this.pending = true;
  }
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.resolve = null;
        resolve();
      }, ms);
      this.resolve = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
