// A background loop of the worker: `tick` runs `intervalMs` after the previous
// tick ended, never two at once, and stop() cancels the next tick and waits for
// the one under way, so a shutdown never cuts a tick in half.
export type TimedLoop = { stop: () => Promise<void> };

export function startTimedLoop(
  tick: () => Promise<unknown>,
  intervalMs: number,
  opts: {
    /** A tick's failure; the loop goes on with the next tick. */
    onError?: (err: unknown) => void;
    /** Let the process exit while the loop waits (a loop that must not hold the worker up alone). */
    unref?: boolean;
    /** The wait before the next tick, asked after each one (a backoff while the database is away); default intervalMs. */
    nextDelayMs?: () => number;
  } = {},
): TimedLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  function schedule() {
    if (stopped) return;
    const delay = opts.nextDelayMs?.() ?? intervalMs;
    timer = setTimeout(() => {
      running = tick()
        .catch((err) => opts.onError?.(err))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, delay);
    if (opts.unref) timer.unref();
  }
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
