// The delivery worker: claim a batch (leased, committed), send each request
// with no transaction open, write the results back in the statement that
// claims the next batch, reap expired leases, heartbeat. One instance per
// process; any number of processes share a database. Each concern is a module
// of its own:
//   claim-loop.ts  the cycle: results written and the next batch claimed in one statement
//   slots.ts       claimed rows, and held (prefetched) rows taking a finished request's slot
//   attempt.ts     one attempt: rate limit, secrets, send, the outcome (lib/ledger/outcome.ts)
//   results.ts     answers waiting to be written, and the last write at shutdown
//   secrets.ts     signing secrets, cached and reloaded while the database is away
//   listen.ts      LISTEN for new work, reconnecting
//   probe.ts       probes of subscriptions paused for failing, and their recovery
//   reaper.ts, heartbeat.ts, shutdown.ts
import os from "node:os";
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Logger } from "pino";
import { logger as rootLogger } from "../lib/log";
import { releaseUnsent } from "../lib/ledger/sql/release-unsent";
import { Attempts } from "./attempt";
import { claimLoop } from "./claim-loop";
import { workerConfig, type WorkerConfig, type WorkerOptions } from "./config";
import { FreezeWatch } from "./freeze";
import { heartbeat } from "./heartbeat";
import { Prober } from "./probe";
import { WorkListener } from "./listen";
import { RateLimiter } from "./rate-limit";
import { reapExpiredLeases } from "./reaper";
import { ResultQueue } from "./results";
import { SecretsCache } from "./secrets";
import { Sender } from "../lib/net/sender";
import { shutdown } from "./shutdown";
import { Slots, type InFlight } from "./slots";
import { Wakeup } from "./wakeup";

export class DeliveryWorker {
  readonly config: WorkerConfig;
  readonly workerId: string;
  readonly log: Logger;
  readonly pool: pg.Pool;
  readonly sender: Sender;
  private readonly limiter = new RateLimiter();
  private readonly wake = new Wakeup();
  private readonly slots: Slots;
  private readonly results: ResultQueue;
  private readonly secrets: SecretsCache;
  private readonly attempts: Attempts;
  private readonly listener: WorkListener;
  private readonly freeze: FreezeWatch;
  private readonly prober: Prober;
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private stopped: Promise<void> | null = null;
  private readonly startedAt = new Date();
  /** Aborted at shutdown: claimed rows not yet on the wire stay unsent (released untouched). */
  private readonly holding = new AbortController();
  /** Aborted when the grace period is to end now (a second Ctrl-C). */
  private readonly hurried = new AbortController();
  private stopResolve: (() => void) | null = null;
  private readonly stopSignal = new Promise<void>((r) => (this.stopResolve = r));

  constructor(opts: WorkerOptions) {
    this.config = workerConfig(opts);
    this.workerId = this.config.workerId ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.log = rootLogger.child({ worker: this.workerId });
    this.pool = new pg.Pool({ connectionString: this.config.databaseUrl, max: 6, statement_timeout: 30_000, application_name: "hookledger-worker" });
    // A dropped connection must not crash the worker; the next query reconnects.
    this.pool.on("error", (err) => this.log.warn({ err: err.message }, "database connection lost; reconnecting"));
    this.sender = new Sender({
      allowPrivate: this.config.allowPrivateTargets,
      lookup: this.config.lookup,
      connectionsPerOrigin: this.config.connectionsPerOrigin,
    });
    this.results = new ResultQueue(this.pool, this.workerId, this.log, () => this.wake.poke());
    this.secrets = new SecretsCache(this.pool, this.log);
    const release = (entry: InFlight) =>
      void releaseUnsent(this.pool, this.workerId, [entry.row]).catch((err) =>
        this.log.warn({ err: (err as Error).message, delivery: entry.row.id }, "could not release an unsent delivery; its lease will expire"),
      );
    this.slots = new Slots({
      leaseSlackMs: this.config.leaseSlackMs,
      run: (entry) => this.attempts.run(entry),
      release,
      stopping: () => this.stopping,
    });
    this.attempts = new Attempts({
      log: this.log,
      sender: this.sender,
      limiter: this.limiter,
      secrets: this.secrets,
      results: this.results,
      slots: this.slots,
      release,
      holding: this.holding.signal,
      random: this.config.random,
    });
    this.prober = new Prober({
      pool: this.pool,
      log: this.log,
      sender: this.sender,
      secrets: this.secrets,
      holding: this.holding.signal,
      onResumed: () => this.wake.poke(),
    });
    this.freeze = new FreezeWatch({ pool: this.pool, workerId: this.workerId, log: this.log, onChange: () => this.wake.poke() });
    this.listener = new WorkListener({
      databaseUrl: this.config.databaseUrl,
      log: this.log,
      onNotify: () => this.wake.poke(),
      onFreeze: () => void this.freeze.reload(),
      stopping: () => this.stopping,
    });
  }

  start(): this {
    this.log.info({ batch: this.config.batchSize, maxInFlight: this.config.maxInFlight, allowPrivateTargets: this.config.allowPrivateTargets }, "worker started");
    void this.listener.run();
    // The freezes are read again with each beat too: a NOTIFY missed, or a freeze expired (its retention run died).
    this.every(
      this.config.heartbeatIntervalMs,
      () => heartbeat(this.pool, { workerId: this.workerId, startedAt: this.startedAt }, this.log).then(() => this.freeze.reload()),
      true,
    );
    this.every(this.config.reapIntervalMs, () => reapExpiredLeases(this.pool, this.log, () => this.wake.poke()), true);
    // Due probes of subscriptions paused for failing are looked for as often as expired leases: both are rare, cheap to find and not urgent to the second.
    this.every(this.config.reapIntervalMs, () => this.prober.tick());
    this.loopDone = claimLoop({
      config: this.config,
      workerId: this.workerId,
      log: this.log,
      pool: this.pool,
      wake: this.wake,
      slots: this.slots,
      results: this.results,
      secrets: this.secrets,
      limiter: this.limiter,
      freeze: this.freeze,
      stopping: () => this.stopping,
      stopSignal: this.stopSignal,
    });
    return this;
  }

  /** Stops claiming, lets in-flight requests finish within the grace period, releases the rest. */
  stop(): Promise<void> {
    if (!this.stopped) this.stopped = this.shutdown();
    return this.stopped;
  }

  /** Stops as stop() does, with the grace period over now (or as soon as the stop reaches it). */
  hurry(): Promise<void> {
    this.hurried.abort();
    return this.stop();
  }

  get inFlightCount() {
    return this.slots.size;
  }

  private every(ms: number, fn: () => Promise<void>, now = false) {
    let running = false;
    const tick = () => {
      if (running || this.stopping) return;
      running = true;
      fn().finally(() => (running = false));
    };
    const t = setInterval(tick, ms);
    t.unref();
    this.timers.push(t);
    if (now) tick();
  }

  private async shutdown() {
    this.stopping = true;
    this.stopResolve?.();
    for (const t of this.timers) clearInterval(t);
    this.wake.poke();
    await shutdown({
      workerId: this.workerId,
      log: this.log,
      pool: this.pool,
      sender: this.sender,
      slots: this.slots,
      results: this.results,
      listener: this.listener,
      shutdownGraceMs: this.config.shutdownGraceMs,
      hurried: this.hurried.signal,
      holding: this.holding,
      loopDone: this.loopDone,
    });
  }
}

export function startWorker(opts: WorkerOptions): DeliveryWorker {
  return new DeliveryWorker(opts).start();
}
