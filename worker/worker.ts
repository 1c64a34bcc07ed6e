// The delivery loop: claim a batch (leased, committed), send each request with
// no transaction open, write the results back in the statement that claims the
// next batch, reap expired leases, heartbeat. One instance per process; any
// number of processes share a database.
import os from "node:os";
import { randomBytes } from "node:crypto";
import pg from "pg";
import type client from "prom-client";
import type { Logger } from "pino";
import { logger as rootLogger } from "../lib/log";
import { classifyAttempt, DEAD_LETTER_REASONS } from "../lib/ledger/classify";
import { maxAttempts, nextAttempt, parseRetryAfter } from "../lib/ledger/backoff";
import { openSecret } from "../lib/subscriptions/secrets";
import { dbBackoff } from "../lib/db/wait";
import { attemptDuration, attemptsTotal, claimBatchSize, schedulingLateness, workerHeartbeat } from "../lib/metrics/worker";
import { Sender } from "./sender";
import { readPolicy } from "./policy";
import { workerConfig, type WorkerConfig, type WorkerOptions } from "./config";
import {
  abandonLeases,
  activeSecrets,
  beat,
  markStopped,
  releaseUnsent,
  writeAndClaim,
  writeResults,
  type AttemptResult,
  type ClaimedRow,
} from "./sql";
import { RateLimiter } from "./rate-limit";
import { memoized } from "./memo";

export const NOTIFY_CHANNEL = "hookledger_deliveries";
const SECRET_TTL_MS = 5_000;
/** At shutdown, after the grace period: how long the last results may take to be written (the database may be away). */
const FINAL_WRITE_MS = 3_000;

/** A claimed row in this worker: on the wire (started), about to be, or held (prefetched, `heldAt` set). */
type InFlight = { row: ClaimedRow; started: boolean; heldAt?: number };

/** Resolves on poke() or after a timeout, whichever comes first. */
class Wakeup {
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class DeliveryWorker {
  readonly config: WorkerConfig;
  readonly workerId: string;
  readonly log: Logger;
  readonly pool: pg.Pool;
  readonly sender: Sender;
  private readonly limiter = new RateLimiter();
  private readonly wake = new Wakeup();
  /** One entry per claim (after a reap this worker may hold a newer claim of the same row). */
  private readonly inflight = new Set<InFlight>();
  /**
   * Prefetched rows per subscription, oldest first: each waits for one of this
   * worker's requests to that subscription to finish and takes its slot, so
   * the slot is refilled without waiting for the next claim (worker/sql.ts
   * claimCtes explains why the cap still holds).
   */
  private readonly held = new Map<string, InFlight[]>();
  /**
   * Per subscription, this worker's requests that finished with nothing held
   * to take their slot since the current statement was sent: the statement
   * could not count those slots free, so rows it brings back held may take them.
   */
  private readonly credits = new Map<string, number>();
  /** Answers whose result is not yet written. */
  private results: AttemptResult[] = [];
  /** The batch of results being written now. */
  private writing: AttemptResult[] = [];
  private secrets = new Map<string, { at: number; plain: string[] }>();
  private listener: pg.Client | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private stopped: Promise<void> | null = null;
  private readonly startedAt = new Date();
  private dbFailures = 0;
  /** Aborted at shutdown: claimed rows not yet on the wire stay unsent (released untouched). */
  private readonly holding = new AbortController();

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
  }

  start(): this {
    this.log.info(
      { batch: this.config.batchSize, maxInFlight: this.config.maxInFlight, allowPrivateTargets: this.config.allowPrivateTargets },
      "worker started",
    );
    void this.listen();
    this.every(this.config.heartbeatIntervalMs, () => this.heartbeat(), true);
    this.every(this.config.reapIntervalMs, () => this.reap(), true);
    this.loopDone = this.loop();
    return this;
  }

  /** Stops claiming, lets in-flight requests finish within the grace period, releases the rest. */
  stop(): Promise<void> {
    if (!this.stopped) this.stopped = this.shutdown();
    return this.stopped;
  }

  get inFlightCount() {
    return this.inflight.size;
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

  // ---- the claim loop ----

  /**
   * One cycle per turn, back to back while there is work: the results that
   * came in since the last cycle are written and the next batch is claimed in
   * one statement (worker/sql.ts writeAndClaim), so one commit. The loop is
   * the only writer of the hot path: claim and result write never run side by
   * side on two connections, where they contended inside Postgres for ~25%
   * more CPU per delivery (BENCHMARKS.md F1). What arrives while a cycle runs
   * goes with the next one: the group commit.
   */
  private async loop() {
    const { batchSize, maxInFlight, pollIntervalMs } = this.config;
    while (!this.stopping) {
      const room = maxInFlight - this.inflight.size;
      // Claim when a useful batch fits; otherwise only write, or wait for answers to free room.
      const asked = room >= Math.min(batchSize, maxInFlight) / 4 || this.inflight.size === 0 ? Math.min(batchSize, room) : 0;
      if (asked === 0 && this.results.length === 0) {
        await this.wake.wait(pollIntervalMs);
        continue;
      }
      const batch = (this.writing = this.results.splice(0, 1000));
      let claimed: ClaimedRow[];
      this.credits.clear(); // slots freed until now are free in this statement's snapshot
      try {
        const out = await writeAndClaim(
          this.pool,
          this.workerId,
          batch,
          asked > 0
            ? {
                limit: asked,
                perSubscription: this.config.perSubscription,
                leaseSlackSeconds: this.config.leaseSlackMs / 1000,
                excludeSubscriptions: this.limiter.exhausted(),
                answered: this.answered(),
                held: this.heldIds(),
              }
            : null,
        );
        this.dbOk();
        this.reportDiscarded(batch, out.applied);
        claimed = out.claimed;
      } catch (err) {
        this.results.unshift(...batch);
        await this.dbFailed(err, batch.length > 0 ? "writing results" : "claim");
        continue;
      } finally {
        this.writing = [];
      }
      if (asked > 0) claimBatchSize.observe(claimed.length);
      if (claimed.length > 0) {
        await this.refreshSecrets(claimed);
        this.place(claimed);
      }
      // Nothing more due (or no room) and no result waiting: sleep until an answer, a NOTIFY or the poll.
      if (this.results.length === 0 && claimed.length < asked) await this.wake.wait(pollIntervalMs);
    }
  }

  /** Each subscription's first `slotsFree` rows go on the wire now; the rest are held for its next finished request. */
  private place(claimed: ClaimedRow[]) {
    const free = new Map<string, number>();
    for (const row of claimed) {
      const entry: InFlight = { row, started: false };
      this.inflight.add(entry);
      const left = free.get(row.subscriptionId) ?? row.slotsFree;
      if (left > 0) {
        free.set(row.subscriptionId, left - 1);
        this.run(entry);
      } else {
        entry.heldAt = performance.now();
        const q = this.held.get(row.subscriptionId);
        if (q) q.push(entry);
        else this.held.set(row.subscriptionId, [entry]);
      }
    }
    for (const [sub, n] of this.credits) for (let i = 0; i < n && this.takeHeld(sub); i++);
  }

  private run(entry: InFlight) {
    void this.process(entry).catch((err) => {
      // process() does not throw by design; if it does, the lease expires and the reaper recovers the row.
      this.log.error({ err, delivery: entry.row.id }, "unexpected error processing a delivery");
      this.finished(entry);
    });
  }

  /** A request is off the wire (or never went): its slot passes to the subscription's oldest held row. */
  private finished(entry: InFlight) {
    this.inflight.delete(entry);
    if (this.stopping) return;
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
    if (heldFor > this.config.leaseSlackMs / 2) {
      this.inflight.delete(entry);
      void releaseUnsent(this.pool, this.workerId, [entry.row]).catch((err) =>
        this.log.warn({ err: (err as Error).message, delivery: entry.row.id }, "could not release a held delivery; its lease will expire"),
      );
      return this.takeHeld(sub);
    }
    this.run(entry);
    return true;
  }

  private heldIds(): string[] {
    const ids: string[] = [];
    for (const q of this.held.values()) for (const e of q) ids.push(e.row.id);
    return ids;
  }

  /** prom-client children per label set, so a delivery's metrics do not hash their labels each time. */
  private readonly attemptCounters = new Map<string, { total: client.Counter.Internal; duration: client.Histogram.Internal<string> }>();

  private countAttempt(subscription: string, outcome: string, errorClass: string, seconds: number) {
    const c = memoized(this.attemptCounters, `${subscription}\u0000${outcome}\u0000${errorClass}`, () => ({
      total: attemptsTotal.labels(subscription, outcome, errorClass),
      duration: attemptDuration.labels(outcome),
    }));
    c.total.inc();
    c.duration.observe(seconds);
  }

  private async process(entry: InFlight) {
    const { row } = entry;
    const hold = this.holding.signal;
    if (row.rateLimitPerSecond && !(await this.limiter.take(row.subscriptionId, row.rateLimitPerSecond, hold))) return;
    const policy = readPolicy(row.retryPolicy);
    const cached = this.secrets.get(row.subscriptionId)?.plain;
    const secrets = cached && cached.length > 0 ? cached : await this.secretsFor(row.subscriptionId, hold);
    if (hold.aborted) return; // shutting down: released unsent
    if (secrets.length === 0) {
      // Never send unsigned. The lease runs out and the reaper returns the row.
      this.log.error({ delivery: row.id, subscription: row.subscriptionId }, "no signing secret could be loaded; not sending");
      this.finished(entry);
      return;
    }
    entry.started = true;
    const startedAt = new Date();
    schedulingLateness.observe(Math.max(0, (startedAt.getTime() - row.dueAt) / 1000));
    const res = await this.sender.send({
      url: row.url,
      deliveryKey: row.deliveryKey,
      body: row.payload,
      secrets,
      timeoutMs: policy.timeoutMs,
    });
    if (res.errorClass === "shutdown") return; // released as abandoned by shutdown()

    const now = new Date();
    const attemptInRun = row.attemptCount + 1;
    const verdict = classifyAttempt(res, policy.classify);
    const retryAfterSeconds = parseRetryAfter(res.retryAfter, now);
    let state: AttemptResult["state"];
    let nextAt: Date | null = null;
    let reason: string | null = null;
    if (verdict.verdict === "delivered") state = "delivered";
    else if (verdict.verdict === "dead_letter") {
      state = "dead_letter";
      reason = verdict.reason;
    } else {
      const next = nextAttempt({
        attemptNumber: attemptInRun,
        runStartedAt: new Date(row.runStartedAt),
        now,
        retryAfterSeconds,
        policy,
        random: this.config.random,
      });
      if (next.kind === "exhausted") {
        state = "dead_letter";
        reason = DEAD_LETTER_REASONS.exhausted;
      } else {
        state = "scheduled";
        nextAt = next.at;
      }
    }
    const errorMessage =
      res.errorMessage ?? (res.statusCode !== null && (res.statusCode < 200 || res.statusCode >= 300) ? `HTTP ${res.statusCode}` : null);
    this.enqueue({
      id: row.id,
      claimToken: row.claimToken,
      state,
      nextAttemptAt: nextAt,
      statusCode: res.statusCode,
      errorClass: verdict.errorClass,
      errorMessage,
      deadLetterReason: reason,
      startedAt,
      durationMs: res.durationMs,
      retryAfterSeconds: res.retryAfter !== null ? retryAfterSeconds : null,
      responseHeaders: res.responseHeaders,
      responseExcerpt: res.responseExcerpt,
      ambiguous: res.ambiguous,
      trigger: row.trigger,
      actor: row.actor,
    });
    this.finished(entry);

    const outcome = state === "scheduled" ? "retry" : state;
    this.countAttempt(row.subscriptionId, outcome, verdict.errorClass ?? "none", res.durationMs / 1000);
    // One line per attempt. Successes at debug: at thousands a second, info would drown the failures.
    if (state === "delivered" && !this.log.isLevelEnabled("debug")) return;
    const line = {
      delivery: row.id,
      subscription: row.subscriptionId,
      attempt: `${attemptInRun}/${maxAttempts(policy)}`,
      status: res.statusCode,
      errorClass: verdict.errorClass,
      durationMs: res.durationMs,
      outcome,
      ...(res.ambiguous ? { ambiguous: true } : {}),
      ...(nextAt ? { nextAttemptAt: nextAt.toISOString() } : {}),
      ...(reason ? { reason } : {}),
      ...(row.trigger !== "scheduled" ? { trigger: row.trigger } : {}),
    };
    if (state === "delivered") this.log.debug(line, "delivered");
    else if (state === "dead_letter") this.log.warn({ ...line, error: errorMessage }, "dead-lettered");
    else this.log.info({ ...line, error: errorMessage }, "attempt failed; retry scheduled");
  }

  /**
   * The subscription's signing secrets, reloading while the database is away
   * (the chaos suite caught requests sent unsigned when a claim was followed by
   * a Postgres restart before the secrets were read). Empty only when they
   * could not be had before shutdown or within ~20 s.
   */
  private async secretsFor(subscriptionId: string, signal: AbortSignal): Promise<string[]> {
    for (let i = 1; ; i++) {
      const cached = this.secrets.get(subscriptionId)?.plain;
      if (cached && cached.length > 0) return cached;
      // At most ~20 s in all: well inside the lease (timeout + 30 s slack), so a
      // row given up on here is not being sent by another worker yet.
      if (signal.aborted || i > 10) return [];
      await sleep(Math.min(2_000, dbBackoff(i)));
      this.secrets.delete(subscriptionId);
      await this.refreshSecrets([{ subscriptionId } as ClaimedRow]);
    }
  }

  private async refreshSecrets(rows: ClaimedRow[]) {
    const now = Date.now();
    const stale = [...new Set(rows.map((r) => r.subscriptionId))].filter((id) => {
      const s = this.secrets.get(id);
      return !s || now - s.at > SECRET_TTL_MS;
    });
    if (stale.length === 0) return;
    try {
      const stored = await activeSecrets(this.pool, stale);
      for (const [id, list] of stored) this.secrets.set(id, { at: now, plain: await Promise.all(list.map((s) => openSecret(s))) });
    } catch (err) {
      // Claimed rows still go out with the cached secrets, or unsigned never: a row without any is held to its lease.
      this.log.warn({ err: (err as Error).message }, "could not load signing secrets");
    }
  }

  // ---- results ----

  private enqueue(r: AttemptResult) {
    this.results.push(r);
    this.wake.poke();
  }

  private reportDiscarded(batch: AttemptResult[], applied: AttemptResult[]) {
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
  private async drainResults(until: number) {
    let failures = 0;
    while (this.results.length > 0) {
      const batch = this.results.splice(0, 1000);
      try {
        this.reportDiscarded(batch, await writeResults(this.pool, this.workerId, batch));
        failures = 0;
      } catch (err) {
        this.results.unshift(...batch);
        const wait = Math.min(dbBackoff(++failures), until - Date.now());
        this.log.warn({ err: (err as Error).message, pending: this.results.length }, wait > 0 ? "could not write results; retrying" : "could not write results; giving up");
        if (wait <= 0) return;
        await sleep(wait);
      }
    }
  }

  /** Ids of claimed rows whose answer is in and whose result is not yet written. */
  private answered(): string[] {
    const ids: string[] = [];
    for (const r of this.writing) ids.push(r.id);
    for (const r of this.results) ids.push(r.id);
    return ids;
  }

  // ---- reaper, heartbeat, LISTEN ----

  private async reap() {
    try {
      for (;;) {
        const rows = await abandonLeases(this.pool, { errorClass: "lease_expired", limit: 1000 });
        if (rows.length > 0) {
          this.log.warn({ count: rows.length, owners: [...new Set(rows.map((r) => r.owner))] }, "reaped expired leases back to due");
          this.wake.poke();
        }
        if (rows.length < 1000) break;
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "reaper: database unavailable");
    }
  }

  private async heartbeat() {
    try {
      await beat(this.pool, { workerId: this.workerId, hostname: os.hostname(), pid: process.pid, startedAt: this.startedAt });
      workerHeartbeat.set(Date.now() / 1000);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "heartbeat: database unavailable");
    }
  }

  private async listen() {
    let failures = 0;
    while (!this.stopping) {
      const client = new pg.Client({ connectionString: this.config.databaseUrl, application_name: "hookledger-worker-listen" });
      const ended = new Promise<void>((resolve) => {
        client.on("error", (err) => {
          this.log.warn({ err: err.message }, "LISTEN connection lost; reconnecting");
          resolve();
        });
        client.on("end", () => resolve());
      });
      try {
        await client.connect();
        client.on("notification", () => this.wake.poke());
        await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
        this.listener = client;
        failures = 0;
        this.wake.poke(); // notifications may have been missed while disconnected
        await ended;
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "could not LISTEN; polling meanwhile");
      }
      this.listener = null;
      await client.end().catch(() => {});
      if (this.stopping) break;
      await sleep(dbBackoff(failures++));
    }
  }

  private dbOk() {
    if (this.dbFailures > 0) this.log.info("database reachable again");
    this.dbFailures = 0;
  }

  private async dbFailed(err: unknown, what: string) {
    this.dbFailures++;
    const delay = dbBackoff(this.dbFailures);
    this.log.warn({ err: (err as Error).message, retryInMs: delay }, `${what}: database unavailable; retrying`);
    await Promise.race([sleep(delay), this.stopSignal]);
  }

  private stopResolve: (() => void) | null = null;
  private stopSignal = new Promise<void>((r) => (this.stopResolve = r));

  // ---- shutdown ----

  private async shutdown() {
    this.stopping = true;
    this.stopResolve?.();
    for (const t of this.timers) clearInterval(t);
    this.wake.poke();
    await this.loopDone;
    const graceUntil = Date.now() + this.config.shutdownGraceMs;
    // Not yet on the wire (waiting on a rate limit): released untouched at once.
    const unsent = [...this.inflight].filter((e) => !e.started);
    this.holding.abort();
    this.log.info({ inFlight: this.inflight.size - unsent.length, graceMs: this.config.shutdownGraceMs }, "stopping: waiting for in-flight requests");
    while ([...this.inflight].some((e) => e.started) && Date.now() < graceUntil) {
      await sleep(25);
      await this.drainResults(graceUntil); // answers that came in meanwhile, so their leases are not held to the end
    }
    const late = [...this.inflight].filter((e) => e.started);
    if (late.length) {
      this.sender.abortAll();
      await sleep(50); // let aborted sends settle before the last flush
    }
    await this.drainResults(Date.now() + FINAL_WRITE_MS);
    try {
      const released = await releaseUnsent(
        this.pool,
        this.workerId,
        unsent.map((e) => e.row),
      );
      const abandoned = late.length
        ? await abandonLeases(this.pool, { errorClass: "shutdown", owner: this.workerId, ids: late.map((e) => e.row.id), claimTokens: late.map((e) => e.row.claimToken) })
        : [];
      await markStopped(this.pool, this.workerId);
      this.log.info({ released, abandoned: abandoned.length }, "worker stopped");
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "could not release leases at shutdown; the reaper will return them when they expire");
    }
    this.inflight.clear();
    this.held.clear();
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
    await this.sender.close();
    await this.pool.end().catch(() => {});
  }
}

export function startWorker(opts: WorkerOptions): DeliveryWorker {
  return new DeliveryWorker(opts).start();
}
