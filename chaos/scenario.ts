// The chaos scenario: real worker processes over a Postgres of the
// run's own, five misbehaving receivers, traffic published through the
// transactional outbox, and faults injected while it flows. At the end, once
// faults stop and retries drain, the invariants of docs/DESIGN.md are checked
// against the ledger and the wire. `npm run chaos` runs the full size;
// test/process/chaos-scenario.test.ts runs the same code at CI size.
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "../lib/db/migrate";
import { createPrisma, type PrismaClient } from "../lib/db/prisma";
import { publishEvent } from "../lib/events/publish";
import { retryTransaction } from "../lib/db/retry";
import { createSubscription, updateSubscription } from "../lib/subscriptions/manage-subscriptions";
import { createRedriveBatch } from "../lib/redrive/redrive-batches";
import { createApiToken } from "../lib/auth/tokens";
import type { Principal } from "../lib/auth/principal";
import { ChaosPostgres } from "./postgres";
import { BEHAVIORS, ReceiverHost, rng, type Behavior, type ReceiverRecord, type Rng } from "./receivers";
import { WorkerFleet, cpuSeconds } from "./workers";
import {
  checkAudit,
  checkDelivered2xx,
  checkNoSendAfter2xx,
  checkOneDeliveryPerPair,
  checkPauseHeld,
  checkTerminal,
  checkWire,
  ledgerRows,
  type ExpectedAudit,
  type InvariantResult,
  type Offender,
} from "./invariants";

export type ChaosOptions = {
  /** Events published (each fans out to the five subscriptions). */
  events: number;
  workers: number;
  /** Events per second the producer publishes at (through publishEvent, the transactional outbox). */
  publishRate: number;
  publishConcurrency: number;
  /** Events per producer transaction (publishEvent(tx, …) inside the producer's own transaction). */
  publishBatch: number;
  /** SIGKILL a random worker and start a new one, this many times. */
  kills: number;
  /** Seconds between faults. */
  stepSeconds: number;
  /** Rounds of "expire leases early under workers mid-send", and rows per round. */
  leaseExpiries: number;
  leaseExpiryRows: number;
  pauseSeconds: number;
  postgresDownMs: number;
  redriveRatePerSecond: number;
  /** Subscription retry policy: a short ladder and timeout so retries drain within the run. */
  ladderSeconds: number[];
  timeoutMs: number;
  drainTimeoutSeconds: number;
  seed: number;
  log: (line: string) => void;
};

export const FULL: Omit<ChaosOptions, "seed" | "log"> = {
  events: 20_000,
  workers: 3,
  publishRate: 350,
  publishConcurrency: 8,
  publishBatch: 25,
  kills: 10,
  stepSeconds: 4,
  leaseExpiries: 5,
  leaseExpiryRows: 100,
  pauseSeconds: 10,
  postgresDownMs: 3_000,
  // Slow enough that the batch is still being paced when Postgres restarts.
  redriveRatePerSecond: 20,
  ladderSeconds: [1, 2, 4, 8],
  timeoutMs: 2_000,
  drainTimeoutSeconds: 180,
};

/** The CI size: the same scenario and checks, about a minute on a 2-core box. */
export const CI: Omit<ChaosOptions, "seed" | "log"> = {
  ...FULL,
  events: 1_000,
  publishRate: 100,
  publishConcurrency: 2,
  publishBatch: 5,
  kills: 4,
  stepSeconds: 2,
  leaseExpiries: 3,
  leaseExpiryRows: 30,
  pauseSeconds: 4,
  postgresDownMs: 2_000,
  redriveRatePerSecond: 1,
  drainTimeoutSeconds: 90,
};

type FaultKind = "kill" | "expire_leases" | "pause" | "resume" | "postgres_restart" | "redrive";
type PlannedFault = { at: number; kind: FaultKind };

type FaultRecord = { kind: FaultKind; plannedAtSeconds: number; startedAtSeconds: number; endedAtSeconds: number; details: Record<string, unknown> };

export type ChaosReport = {
  ok: boolean;
  runId: string;
  seed: number;
  postgresVersion: string;
  startedAt: string;
  finishedAt: string;
  options: Omit<ChaosOptions, "log">;
  subscriptions: { id: string; behavior: Behavior; does: string }[];
  faults: {
    injected: FaultRecord[];
    counts: Record<string, number>;
  };
  traffic: {
    eventsPublished: number;
    publishSeconds: number;
    publishRetries: number;
    deliveries: Record<string, number>;
    deadLetterReasons: Record<string, number>;
    attemptsByOutcome: Record<string, number>;
  };
  receivers: {
    subscriptionId: string;
    behavior: Behavior;
    requests: number;
    keysSeen: number;
    applied: number;
    duplicatesSuppressed: number;
    answered: ReceiverRecord["answered"];
    /** Requests sooner than Retry-After: 1 after a 429 to the same key (informational; a reaped lease retries at once). */
    earlyAfter429: number;
  }[];
  duplicatesSuppressedTotal: number;
  ambiguousAttempts: { total: number; byErrorClass: Record<string, number> };
  forcedDuplicateClaims: { leasesExpired: number; keysSentTwiceOrMore: number };
  redrive: Record<string, unknown> | null;
  workers: {
    spawned: number;
    killed: number;
    exitsAtEnd: { n: number; pid: number; exit: number | string }[];
    unexpectedExits: { n: number; pid: number; exit: number | string | null; logTail: string }[];
  };
  timing: {
    lastFaultAtSeconds: number;
    publishEndedAtSeconds: number;
    drainedAtSeconds: number | null;
    /** From the end of the last fault until every delivery is terminal (and the redrive batch done). */
    timeToDrainSeconds: number | null;
    /** From the last event published until every delivery is terminal: the retry tail alone. */
    timeToDrainAfterTrafficSeconds: number | null;
    totalSeconds: number;
  };
  invariants: InvariantResult[];
  findings: string[];
  runDir: string;
};

const activeRuns = new Set<{ stop: () => Promise<void> }>();

/** Stops the workers, receivers and Postgres of any run still in progress (after a test timeout, or on Ctrl-C). */
export async function stopActiveRuns(): Promise<void> {
  for (const r of [...activeRuns]) {
    activeRuns.delete(r);
    await r.stop();
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

/** Retries `fn` (a database call that a Postgres restart may interrupt) until it succeeds or `ms` pass. */
async function persist<T>(fn: () => Promise<T>, ms: number, what: string, onRetry?: () => void): Promise<T> {
  const until = Date.now() + ms;
  for (let i = 0; ; i++) {
    try {
      return await withTimeout(fn(), 15_000, what);
    } catch (err) {
      if (Date.now() > until) throw new Error(`${what} kept failing for ${ms} ms: ${(err as Error).message}`);
      onRetry?.();
      await sleep(Math.min(2_000, 100 * 2 ** i));
    }
  }
}

/** The fault timeline, in seconds from the start of traffic. Pause and resume end before the redrive and the Postgres restart. */
function planFaults(o: Omit<ChaosOptions, "seed" | "log">): PlannedFault[] {
  const step = o.stepSeconds;
  const plan: PlannedFault[] = [];
  const half = Math.ceil(o.kills / 2);
  let t = step;
  for (let i = 0; i < half; i++, t += step) plan.push({ at: t, kind: "kill" });
  const pauseAt = step * 1.5;
  plan.push({ at: pauseAt, kind: "pause" }, { at: pauseAt + o.pauseSeconds, kind: "resume" });
  // The bulk redrive starts just before Postgres restarts, so the workers' pacers are mid-batch when it goes.
  const restartAt = Math.max(t, pauseAt + o.pauseSeconds + step);
  plan.push({ at: restartAt - step / 2, kind: "redrive" }, { at: restartAt, kind: "postgres_restart" });
  t = restartAt + step * 1.5;
  for (let i = half; i < o.kills; i++, t += step) plan.push({ at: t, kind: "kill" });
  const end = t - step;
  for (let i = 0; i < o.leaseExpiries; i++) {
    let at = step * 0.75 + (i * (end - step * 0.75)) / Math.max(1, o.leaseExpiries - 1);
    if (Math.abs(at - restartAt) < step) at = restartAt + step * 1.25;
    plan.push({ at: Math.round(at * 100) / 100, kind: "expire_leases" });
  }
  return plan.sort((a, b) => a.at - b.at);
}

/** What every step of one run shares. */
type Run = {
  o: ChaosOptions;
  log: (line: string) => void;
  random: Rng;
  runId: string;
  started: number;
  /** Seconds since the run started, to a tenth. */
  secs: (t: number) => number;
  findings: string[];
  postgres: ChaosPostgres;
  host: ReceiverHost;
  runDir: string;
};

/** The database, the operator, the subscriptions and the worker fleet, once set up. */
type Setup = {
  prisma: PrismaClient;
  db: pg.Pool;
  principal: Principal;
  expectedAudit: ExpectedAudit[];
  subs: { id: string; behavior: Behavior }[];
  subIds: string[];
  pauseTarget: { id: string; behavior: Behavior };
  fleet: WorkerFleet;
  workerIdOf: (pid: number) => Promise<string | null>;
  /** The server's version (SHOW server_version): HOOKLEDGER_POSTGRES_BIN runs the suite on another major. */
  postgresVersion: string;
};

type Traffic = {
  trafficStart: number;
  eventIds: string[];
  publishFailed: string[];
  /** Kept up to date while the producer runs (the progress line reads it). */
  stats: { published: number; publishRetries: number };
  /** When the last batch was published. */
  publisher: Promise<number>;
};

type RestartInfo = { stoppedAt: number; startedAt: number; workerIds: { pid: number; workerId: string | null }[] };

type FaultState = {
  faults: FaultRecord[];
  pauseWindow: { from: number; to: number } | null;
  pausedAt: number;
  redriveBatchId: string | null;
  expiredKeys: Set<string>;
  restartInfo: RestartInfo | null;
  lastFaultEnd: number;
  cpuDuringOutage: { pid: number; cpuShare: number | null }[];
};

type Exits = { unexpectedExits: ChaosReport["workers"]["unexpectedExits"]; exitsAtEnd: ChaosReport["workers"]["exitsAtEnd"] };

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const o = opts;
  let driverLog: number | null = null;
  const log = (line: string) => {
    o.log(line);
    if (driverLog !== null) fs.writeSync(driverLog, `${new Date().toISOString()} ${line}\n`);
  };
  const runId = `${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, "")
    .slice(0, 14)}_${randomBytes(2).toString("hex")}`;
  const started = Date.now();

  // Every process of the run shares this key: the driver seals the subscription secrets, the workers open them.
  process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";

  const postgres = new ChaosPostgres();
  const runDir = postgres.dir;
  fs.mkdirSync(path.join(runDir, "logs"), { recursive: true });
  driverLog = fs.openSync(path.join(runDir, "logs", "driver.log"), "a");
  const run: Run = {
    o,
    log,
    random: rng(o.seed),
    runId,
    started,
    secs: (t: number) => Math.round((t - started) / 100) / 10,
    findings: [],
    postgres,
    host: new ReceiverHost(),
    runDir,
  };
  // What the set-up opened, for the finally below (it may fail half-way).
  const opened: { fleet: WorkerFleet | null; prisma: PrismaClient | null; pool: pg.Pool | null } = { fleet: null, prisma: null, pool: null };
  const killOnExit = () => opened.fleet?.killAllNow();
  process.on("exit", killOnExit);
  // stopActiveRuns() (a test's afterAll after a timeout, or Ctrl-C) stops what this run started.
  const active = {
    stop: async () => {
      opened.fleet?.killAllNow();
      await run.host.stop().catch(() => {});
      await postgres.stop().catch(() => {});
    },
  };
  activeRuns.add(active);

  try {
    const s = await setUp(run, opened);
    const traffic = startTraffic(run, s);
    const supervisor = startSupervisor(run, s);
    const progress = startProgress(run, s, traffic);
    const faultState = await injectFaults(run, s, traffic.trafficStart);
    const { publishEnded, drainedAt } = await drain(run, s, traffic, faultState.lastFaultEnd, progress);
    await supervisor.stop();
    const exits = await stopWorkers(run, s);
    const receivers = await run.host.snapshot();
    const invariants = await checkInvariants(run, s, traffic, faultState, exits, receivers);
    return await buildReport(run, s, { traffic, faultState, exits, receivers, invariants, publishEnded, drainedAt });
  } finally {
    opened.fleet?.killAllNow();
    process.off("exit", killOnExit);
    activeRuns.delete(active);
    if (driverLog !== null) fs.closeSync(driverLog);
    driverLog = null;
    await run.host.stop().catch(() => {});
    await opened.prisma?.$disconnect().catch(() => {});
    await opened.pool?.end().catch(() => {});
    await postgres.stop().catch(() => {});
  }
}

/** Set-up: database, operator, subscriptions, receivers, workers (up and beating). */
async function setUp(run: Run, opened: { fleet: WorkerFleet | null; prisma: PrismaClient | null; pool: pg.Pool | null }): Promise<Setup> {
  const { o, log, runId, postgres, host, runDir } = run;
  const url = await postgres.start();
  process.env.DATABASE_URL = url;
  await migrate(url);
  const prisma = (opened.prisma = createPrisma(url));
  const db = (opened.pool = new pg.Pool({ connectionString: url, max: 4 }));
  db.on("error", () => {});
  const postgresVersion = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0].server_version;
  log(`PostgreSQL ${postgresVersion} at ${new URL(url).host}, data in ${runDir}`);

  const op = await createApiToken(prisma, { role: "admin", name: `chaos-operator-${runId}` });
  const principal: Principal = { kind: "token", id: op.id, role: "admin", actor: `token:${op.name}` };
  const expectedAudit: ExpectedAudit[] = [];

  const behaviors: Behavior[] = ["dedup", "drop", "flaky503", "reject422", "throttle429"];
  const specs = behaviors.map((behavior, i) => ({
    behavior,
    subscriptionId: `chaos_${behavior}`,
    secrets: [`whsec_${randomBytes(24).toString("base64")}`],
    seed: o.seed + i + 1,
    // The rate limit: the steady traffic's own rate, so the limiter answers 429 when a second's deliveries run above it
    // (the backlog after a fault, a killed worker's leases coming back) and most of the steady traffic passes.
    perSecond: o.publishRate,
  }));
  const urls = await host.start(specs);
  const subs: { id: string; behavior: Behavior }[] = [];
  for (const [i, spec] of specs.entries()) {
    const t0 = new Date();
    await createSubscription(
      prisma,
      {
        id: spec.subscriptionId,
        name: `Chaos ${spec.behavior}`,
        url: urls[i],
        eventTypes: ["assignment.graded"],
        secret: spec.secrets[0],
        retryPolicy: { ladderSeconds: o.ladderSeconds, timeoutMs: o.timeoutMs },
        maxConcurrency: 50,
      },
      principal,
    );
    expectedAudit.push({ action: "subscription.create", targetType: "subscription", targetId: spec.subscriptionId, actor: principal.actor, after: t0 });
    subs.push({ id: spec.subscriptionId, behavior: spec.behavior });
  }

  const fleet = (opened.fleet = new WorkerFleet({
    databaseUrl: url,
    logDir: path.join(runDir, "logs"),
    env: {
      HOOKLEDGER_SECRET_KEY: process.env.HOOKLEDGER_SECRET_KEY!,
      HOOKLEDGER_DATA_DIR: runDir,
      LOG_LEVEL: "info",
      HOOKLEDGER_WORKER_POLL_MS: "200",
      HOOKLEDGER_REAP_INTERVAL_MS: "500",
      // Lease = timeout + 5 s: a SIGKILLed worker's rows come back within seconds, and a
      // worker starved of CPU on a busy 2-core box still writes its results in time.
      HOOKLEDGER_LEASE_SLACK_MS: "5000",
      HOOKLEDGER_HEARTBEAT_MS: "1000",
      HOOKLEDGER_SHUTDOWN_GRACE_MS: "5000",
    },
  }));
  for (let i = 0; i < o.workers; i++) fleet.spawn();
  await persist(
    async () => {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM worker_heartbeats WHERE stopped_at IS NULL AND beat_at > now() - interval '5 seconds'");
      if (rows[0].n < o.workers) throw new Error(`${rows[0].n} of ${o.workers} workers up`);
    },
    60_000,
    "waiting for the workers' first heartbeats",
  );
  log(`${o.workers} workers up; ${subs.length} subscriptions: ${subs.map((s) => s.behavior).join(", ")}`);

  const workerIdOf = async (pid: number): Promise<string | null> => {
    const { rows } = await db.query<{ worker_id: string }>("SELECT worker_id FROM worker_heartbeats WHERE pid = $1 ORDER BY started_at DESC LIMIT 1", [pid]);
    return rows[0]?.worker_id ?? null;
  };
  return {
    postgresVersion,
    prisma,
    db,
    principal,
    expectedAudit,
    subs,
    subIds: subs.map((x) => x.id),
    pauseTarget: subs.find((x) => x.behavior === "flaky503")!,
    fleet,
    workerIdOf,
  };
}

/** Traffic: the producer publishes through the outbox at the set rate, retrying through the Postgres restart. */
function startTraffic(run: Run, s: Setup): Traffic {
  const { o, log, runId } = run;
  const trafficStart = Date.now();
  const eventIds: string[] = Array.from({ length: o.events }, (_, i) => `evt_chaos_${runId}_${i + 1}`);
  const stats = { published: 0, publishRetries: 0 };
  const publishFailed: string[] = [];
  let next = 0;
  const batches: string[][] = [];
  for (let i = 0; i < eventIds.length; i += o.publishBatch) batches.push(eventIds.slice(i, i + o.publishBatch));
  const px = s.prisma;
  // Several events per transaction, as a producer publishing inside its own transaction does; a batch
  // that fails (the Postgres restart) rolls back whole and is retried whole, with the same event ids.
  const publisher = Promise.all(
    Array.from({ length: o.publishConcurrency }, async () => {
      for (;;) {
        const b = next++;
        if (b >= batches.length) return;
        const due = trafficStart + ((b * o.publishBatch) / o.publishRate) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
        const ids = batches[b];
        try {
          await persist(
            () =>
              px.$transaction(
                async (tx) => {
                  for (const id of ids) {
                    const i = Number(id.slice(id.lastIndexOf("_") + 1));
                    await publishEvent(tx, {
                      id,
                      type: "assignment.graded",
                      data: { studentId: `stu_${i % 977}`, assignmentId: `asg_${i % 13}`, score: i % 101 },
                      subject: { studentId: `stu_${i % 977}`, assignmentId: `asg_${i % 13}` },
                    });
                  }
                },
                { maxWait: 10_000, timeout: 14_000 },
              ),
            120_000,
            `publishing ${ids[0]}…`,
            () => stats.publishRetries++,
          );
          stats.published += ids.length;
        } catch (err) {
          publishFailed.push(...ids);
          log(`could not publish ${ids[0]}… (${ids.length} events): ${(err as Error).message}`);
        }
      }
    }),
  ).then(() => Date.now());
  return { trafficStart, eventIds, publishFailed, stats, publisher };
}

/** A supervisor, as production has: a worker that exits on its own is recorded (an invariant fails) and replaced. */
function startSupervisor(run: Run, s: Setup): { stop: () => Promise<void> } {
  let supervising = true;
  const replaced = new Set<number>();
  const loop = (async () => {
    while (supervising) {
      await sleep(1_000);
      if (!run.postgres.running) continue;
      for (const w of s.fleet.all)
        if (w.exit !== null && !w.killedByUs && !replaced.has(w.n)) {
          replaced.add(w.n);
          const fresh = s.fleet.spawn();
          run.log(`worker ${w.n} (pid ${w.pid}) exited by itself (${w.exit}); the supervisor started worker ${fresh.n} (pid ${fresh.pid})`);
        }
    }
  })();
  return {
    stop: async () => {
      supervising = false;
      await loop;
    },
  };
}

/** A progress line every 5 s. */
function startProgress(run: Run, s: Setup, traffic: Traffic): { stop: () => Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sleep(5_000);
      if (stopped) break;
      try {
        const { rows } = await withTimeout(
          s.db.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) GROUP BY state", [s.subIds]),
          5_000,
          "progress",
        );
        const byState = Object.fromEntries(rows.map((r) => [r.state, r.n]));
        const seen = (await withTimeout(run.host.counts(), 5_000, "receiver counts")).reduce((a, n) => a + n, 0);
        run.log(
          `t=${run.secs(Date.now())}s published ${traffic.stats.published}/${run.o.events} · ${JSON.stringify(byState)} · workers alive ${s.fleet.alive.length} · requests ${seen}`,
        );
      } catch {
        run.log(`t=${run.secs(Date.now())}s published ${traffic.stats.published}/${run.o.events} · (database unavailable)`);
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** The faults, at their planned times from the start of traffic; a fault that fails is a finding, and the run goes on. */
async function injectFaults(run: Run, s: Setup, trafficStart: number): Promise<FaultState> {
  const state: FaultState = {
    faults: [],
    pauseWindow: null,
    pausedAt: 0,
    redriveBatchId: null,
    expiredKeys: new Set<string>(),
    restartInfo: null,
    lastFaultEnd: Date.now(),
    cpuDuringOutage: [],
  };
  for (const f of planFaults(run.o)) {
    const due = trafficStart + f.at * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
    const t0 = Date.now();
    const details: Record<string, unknown> = {};
    try {
      if (f.kind === "kill") await killWorker(run, s, details);
      else if (f.kind === "expire_leases") await expireLeases(run, s, state, details);
      else if (f.kind === "pause") await pauseOrResume(run, s, state, "pause", details);
      else if (f.kind === "resume") await pauseOrResume(run, s, state, "resume", details);
      else if (f.kind === "postgres_restart") await restartPostgres(run, s, state, details);
      else if (f.kind === "redrive") await startRedrive(run, s, state, details);
    } catch (err) {
      details.error = (err as Error).message;
      run.findings.push(`fault ${f.kind} at ${f.at}s failed: ${(err as Error).message}`);
      run.log(`fault ${f.kind} failed: ${(err as Error).message}`);
    }
    state.lastFaultEnd = Date.now();
    state.faults.push({ kind: f.kind, plannedAtSeconds: f.at, startedAtSeconds: run.secs(t0), endedAtSeconds: run.secs(state.lastFaultEnd), details });
  }
  return state;
}

async function killWorker(run: Run, s: Setup, details: Record<string, unknown>): Promise<void> {
  const { fleet: fl, db } = s;
  // A worker that is up (has a heartbeat), so the kill costs leases, not a start-up; and never the
  // last one running: on a busy box a replacement can take longer to start than a fault step.
  const running = async () => {
    const { rows: up } = await db.query<{ pid: number }>("SELECT pid FROM worker_heartbeats WHERE stopped_at IS NULL");
    const upPids = new Set(up.map((r) => Number(r.pid)));
    return fl.alive.filter((w) => upPids.has(w.pid));
  };
  let live = await running();
  for (let i = 0; i < 60 && live.length < Math.min(2, run.o.workers); i++) {
    await sleep(500);
    live = await running();
  }
  if (live.length === 0) live = fl.alive;
  const victim = live[Math.floor(run.random() * live.length)];
  const workerId = await s.workerIdOf(victim.pid).catch(() => null);
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE state = 'in_flight' AND lease_owner = $1", [workerId]);
  await fl.kill9(victim);
  const fresh = fl.spawn();
  Object.assign(details, { killedPid: victim.pid, workerId, leasesHeld: rows[0].n, replacementPid: fresh.pid });
  run.log(`fault: SIGKILL worker ${victim.n} (pid ${victim.pid}, ${rows[0].n} leases held); started worker ${fresh.n} (pid ${fresh.pid})`);
}

async function expireLeases(run: Run, s: Setup, state: FaultState, details: Record<string, unknown>): Promise<void> {
  // A hundred rows in random order against the workers' result writes: PostgreSQL may end either side of a lock cycle
  // as a deadlock. A worker retries its write; this fault tries again too, a few times, rather than not happen.
  const expire = () =>
    s.db.query<{ id: string; delivery_key: string; lease_owner: string }>(
      `UPDATE deliveries SET lease_until = now() - interval '1 second'
        WHERE id IN (SELECT id FROM deliveries WHERE state = 'in_flight' AND subscription_id = ANY($1) ORDER BY random() LIMIT $2)
          AND state = 'in_flight'
       RETURNING id, delivery_key, lease_owner`,
      [s.subIds, run.o.leaseExpiryRows],
    );
  const { rows } = await retryTransaction(expire, 3);
  for (const r of rows) state.expiredKeys.add(r.delivery_key);
  Object.assign(details, { leasesExpired: rows.length, owners: [...new Set(rows.map((r) => r.lease_owner))].length });
  run.log(`fault: expired ${rows.length} leases early under ${details.owners} worker(s) mid-send`);
}

async function pauseOrResume(run: Run, s: Setup, state: FaultState, kind: "pause" | "resume", details: Record<string, unknown>): Promise<void> {
  const { pauseTarget, principal } = s;
  const at = new Date();
  if (kind === "pause") {
    await updateSubscription(s.prisma, pauseTarget.id, { state: "paused", reason: `chaos ${run.runId}: pause for ${run.o.pauseSeconds} s` }, principal);
    state.pausedAt = Date.now();
    s.expectedAudit.push({ action: "subscription.pause", targetType: "subscription", targetId: pauseTarget.id, actor: principal.actor, after: at });
    Object.assign(details, { subscriptionId: pauseTarget.id });
    run.log(`fault: paused ${pauseTarget.id}`);
    return;
  }
  // In-flight requests finish within the timeout; after that, nothing may reach the paused receiver.
  state.pauseWindow = { from: state.pausedAt + run.o.timeoutMs + 1_000, to: Date.now() };
  await updateSubscription(s.prisma, pauseTarget.id, { state: "active", reason: `chaos ${run.runId}: resume` }, principal);
  s.expectedAudit.push({ action: "subscription.resume", targetType: "subscription", targetId: pauseTarget.id, actor: principal.actor, after: at });
  Object.assign(details, { subscriptionId: pauseTarget.id, pausedSeconds: Math.round((Date.now() - state.pausedAt) / 100) / 10 });
  run.log(`fault: resumed ${pauseTarget.id} after ${details.pausedSeconds} s`);
}

async function restartPostgres(run: Run, s: Setup, state: FaultState, details: Record<string, unknown>): Promise<void> {
  const fl = s.fleet;
  // Restart under workers that are running (a worker still starting up when the database vanishes is another case, below).
  await persist(
    async () => {
      const { rows: up } = await s.db.query<{ pid: number }>("SELECT pid FROM worker_heartbeats WHERE stopped_at IS NULL AND beat_at > now() - interval '5 seconds'");
      const upPids = new Set(up.map((r) => Number(r.pid)));
      const starting = fl.alive.filter((w) => !upPids.has(w.pid));
      if (starting.length) throw new Error(`${starting.length} worker(s) still starting`);
    },
    90_000,
    "waiting for every worker to be up before restarting Postgres",
  );
  const before = fl.alive.map((w) => ({ w, cpu: cpuSeconds(w.pid) }));
  const workerIds = await Promise.all(before.map(async ({ w }) => ({ pid: w.pid, workerId: await s.workerIdOf(w.pid).catch(() => null) })));
  const r = await run.postgres.restart(run.o.postgresDownMs);
  const outage = (r.startedAt - r.stoppedAt) / 1000;
  for (const { w, cpu } of before) {
    const now = cpuSeconds(w.pid);
    state.cpuDuringOutage.push({ pid: w.pid, cpuShare: cpu !== null && now !== null ? Math.round(((now - cpu) / outage) * 100) / 100 : null });
  }
  state.restartInfo = { ...r, workerIds };
  Object.assign(details, { downSeconds: outage, workersAcrossRestart: workerIds.length, workerCpuShareWhileDown: state.cpuDuringOutage });
  run.log(`fault: restarted postgres (down ${outage} s); worker CPU share while down: ${state.cpuDuringOutage.map((c) => c.cpuShare).join(", ")}`);
}

async function startRedrive(run: Run, s: Setup, state: FaultState, details: Record<string, unknown>): Promise<void> {
  const { o, runId } = run;
  const at = new Date();
  const batch = await persist(
    () =>
      createRedriveBatch(
        s.prisma,
        { filter: {}, reason: `chaos ${runId}: redrive the DLQ while traffic flows`, ratePerSecond: o.redriveRatePerSecond, latestStateWins: false },
        s.principal,
      ),
    20_000,
    "creating the bulk redrive",
  );
  state.redriveBatchId = batch.id;
  s.expectedAudit.push({ action: "redrive.create", targetType: "redrive_batch", targetId: batch.id, actor: s.principal.actor, after: at });
  Object.assign(details, { batchId: batch.id, matched: batch.matched, ratePerSecond: o.redriveRatePerSecond });
  run.log(`fault: bulk redrive ${batch.id} of ${batch.matched} dead letters at ${o.redriveRatePerSecond}/s`);
}

/** Drain: traffic ends, retries run out, every row terminal and the redrive batch done (or the bound passes). */
async function drain(
  run: Run,
  s: Setup,
  traffic: Traffic,
  lastFaultEnd: number,
  progress: { stop: () => Promise<void> },
): Promise<{ publishEnded: number; drainedAt: number | null }> {
  const { o, log } = run;
  const publishEnded = await traffic.publisher;
  log(
    `published ${traffic.stats.published} events in ${Math.round((publishEnded - traffic.trafficStart) / 100) / 10} s (${traffic.stats.publishRetries} retries); draining`,
  );
  let drainedAt: number | null = null;
  const drainUntil = Date.now() + o.drainTimeoutSeconds * 1000;
  while (Date.now() < drainUntil) {
    try {
      const { rows } = await withTimeout(
        s.db.query<{ open: number }>(
          `SELECT (SELECT count(*) FROM deliveries WHERE subscription_id = ANY($1) AND state NOT IN ('delivered', 'dead_letter'))::int
                + (SELECT count(*) FROM redrive_batches WHERE status = 'running')::int AS open`,
          [s.subIds],
        ),
        10_000,
        "drain check",
      );
      if (rows[0].open === 0) {
        drainedAt = Date.now();
        break;
      }
    } catch {
      /* checked again */
    }
    await sleep(500);
  }
  await progress.stop();
  log(drainedAt ? `drained ${Math.round((drainedAt - lastFaultEnd) / 100) / 10} s after the last fault` : `NOT drained within ${o.drainTimeoutSeconds} s`);
  return { publishEnded, drainedAt };
}

/** Stop: SIGTERM every worker; each must exit 0 within its grace period. */
async function stopWorkers(run: Run, s: Setup): Promise<Exits> {
  const fl = s.fleet;
  // Workers started by the last faults must be up first: SIGTERM during start-up is a separate case (see chaos/README.md).
  await persist(
    async () => {
      const { rows: up } = await s.db.query<{ pid: number }>("SELECT pid FROM worker_heartbeats WHERE stopped_at IS NULL");
      const upPids = new Set(up.map((r) => Number(r.pid)));
      const starting = fl.alive.filter((w) => !upPids.has(w.pid));
      if (starting.length) throw new Error(`worker(s) ${starting.map((w) => w.n).join(", ")} still starting`);
    },
    90_000,
    "waiting for every worker to be up before SIGTERM",
  ).catch((err) => run.findings.push((err as Error).message));
  const unexpectedExits = fl.all.filter((w) => !w.killedByUs && w.exit !== null).map((w) => ({ n: w.n, pid: w.pid, exit: w.exit, logTail: fl.crash(w) }));
  const exitsAtEnd = await fl.stopAll(15_000);
  return { unexpectedExits, exitsAtEnd };
}

/** The invariants of docs/DESIGN.md on the ledger and the wire, and the run's own: workers, reconnect, redrive, producer. */
async function checkInvariants(
  run: Run,
  s: Setup,
  traffic: Traffic,
  state: FaultState,
  exits: Exits,
  receivers: Awaited<ReturnType<ReceiverHost["snapshot"]>>,
): Promise<InvariantResult[]> {
  const { db, subIds } = s;
  const rows = await ledgerRows(db, subIds);
  const invariants: InvariantResult[] = [];
  invariants.push(
    await checkOneDeliveryPerPair(
      db,
      traffic.eventIds.filter((id) => !traffic.publishFailed.includes(id)),
      subIds,
    ),
  );
  invariants.push(checkTerminal(rows));
  invariants.push(checkDelivered2xx(rows));
  invariants.push(...(await checkNoSendAfter2xx(db, subIds)));
  invariants.push(...checkWire(rows, receivers));
  invariants.push(await checkAudit(db, s.expectedAudit));
  invariants.push(
    checkPauseHeld(
      receivers.find((r) => r.subscriptionId === s.pauseTarget.id),
      state.pauseWindow,
    ),
  );
  invariants.push(
    workerCheck("workers_survive_and_stop", "no worker exits on its own (Postgres restart included), and every worker exits 0 on SIGTERM", [
      ...exits.unexpectedExits.map((w) => ({ detail: `worker ${w.n} (pid ${w.pid}) exited by itself with ${w.exit}: ${w.logTail}` })),
      ...exits.exitsAtEnd.filter((e) => e.exit !== 0).map((e) => ({ detail: `worker ${e.n} (pid ${e.pid}) exited with ${e.exit} on SIGTERM` })),
    ]),
  );
  invariants.push(
    workerCheck(
      "reconnect_no_hang_no_spin",
      "across the Postgres restart each worker carries on: attempts after, and no busy loop while down",
      await reconnectOffenders(s, state),
    ),
  );
  invariants.push(
    workerCheck(
      "redrive_batch_completes",
      "the bulk redrive, paced by the workers through the Postgres restart, handles every item and finishes",
      await redriveOffenders(db, state.redriveBatchId),
    ),
  );
  const publishCheck = traffic.publishFailed.map((id) => ({ detail: `event ${id} could not be published within 120 s of retries` }));
  invariants.push(workerCheck("producer_publishes", "every event is published (the producer retries through the restart; publishing is idempotent)", publishCheck));
  return invariants;
}

/** After the restart: no exit, no hang (each surviving worker writes again), no spinning while the database was down. */
async function reconnectOffenders(s: Setup, state: FaultState): Promise<Offender[]> {
  const rs = state.restartInfo;
  const reconnect: Offender[] = [];
  if (!rs) return [{ detail: "Postgres was not restarted (the fault failed)" }];
  const killedPids = new Set(s.fleet.all.filter((w) => w.killedByUs).map((w) => w.pid));
  for (const { pid, workerId } of rs.workerIds) {
    if (killedPids.has(pid)) continue; // killed by a later fault; nothing to conclude
    const { rows: a } = await s.db.query<{ n: number }>("SELECT count(*)::int AS n FROM attempts WHERE worker_id = $1 AND created_at > $2", [
      workerId,
      new Date(rs.startedAt),
    ]);
    if (a[0].n === 0) reconnect.push({ detail: `worker pid ${pid} (${workerId}) recorded no attempt after Postgres came back (hung?)` });
  }
  for (const c of state.cpuDuringOutage)
    if (c.cpuShare !== null && c.cpuShare > 0.6)
      reconnect.push({ detail: `worker pid ${c.pid} used ${Math.round(c.cpuShare * 100)}% of a core while Postgres was down (spinning?)` });
  return reconnect;
}

async function redriveOffenders(db: pg.Pool, redriveBatchId: string | null): Promise<Offender[]> {
  if (!redriveBatchId) return [{ detail: "no bulk redrive was created (the fault failed)" }];
  const { rows: b } = await db.query<{ status: string; matched: number; redriven: number; skipped: number; unhandled: number }>(
    `SELECT status, matched, redriven, skipped,
            (SELECT count(*)::int FROM redrive_batch_items i WHERE i.batch_id = b.id AND i.outcome IS NULL) AS unhandled
       FROM redrive_batches b WHERE id = $1`,
    [redriveBatchId],
  );
  const x = b[0];
  if (!x || x.status !== "done" || x.redriven + x.skipped !== x.matched || x.unhandled > 0)
    return [{ detail: `redrive batch ${redriveBatchId}: ${JSON.stringify(x)} (want status done, redriven + skipped = matched, no item unhandled)` }];
  return [];
}

/** The report: the invariants, and the counts and timings that say what the run went through. */
async function buildReport(
  run: Run,
  s: Setup,
  r: {
    traffic: Traffic;
    faultState: FaultState;
    exits: Exits;
    receivers: Awaited<ReturnType<ReceiverHost["snapshot"]>>;
    invariants: InvariantResult[];
    publishEnded: number;
    drainedAt: number | null;
  },
): Promise<ChaosReport> {
  const { o, secs } = run;
  const { db, subIds } = s;
  const { traffic, faultState, receivers, invariants, publishEnded, drainedAt } = r;
  const { faults, lastFaultEnd, redriveBatchId } = faultState;
  const counts = async (sql: string) => Object.fromEntries((await db.query<{ k: string; n: number }>(sql, [subIds])).rows.map((x) => [x.k ?? "null", x.n]));
  const deliveries = await counts("SELECT state AS k, count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) GROUP BY 1 ORDER BY 1");
  const deadLetterReasons = await counts(
    "SELECT dead_letter_reason AS k, count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) AND state = 'dead_letter' GROUP BY 1 ORDER BY 1",
  );
  const attemptsByOutcome = await counts("SELECT outcome AS k, count(*)::int AS n FROM attempts WHERE subscription_id = ANY($1) GROUP BY 1 ORDER BY 1");
  const ambiguousByClass = await counts(
    "SELECT COALESCE(error_class, 'none') AS k, count(*)::int AS n FROM attempts WHERE subscription_id = ANY($1) AND ambiguous GROUP BY 1 ORDER BY 1",
  );
  let redrive: Record<string, unknown> | null = null;
  if (redriveBatchId) {
    const { rows: b } = await db.query(
      `SELECT b.id, b.status, b.matched, b.redriven, b.skipped, b.rate_per_second AS "ratePerSecond",
              extract(epoch FROM b.finished_at - b.created_at)::float AS "seconds",
              (SELECT count(*)::int FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id WHERE i.batch_id = b.id AND i.outcome = 'redriven' AND d.state = 'delivered') AS "deliveredSince",
              (SELECT count(*)::int FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id WHERE i.batch_id = b.id AND i.outcome = 'redriven' AND d.state = 'dead_letter') AS "failedAgain"
         FROM redrive_batches b WHERE b.id = $1`,
      [redriveBatchId],
    );
    redrive = b[0];
  }
  const sentTwice = [...faultState.expiredKeys].filter((k) => receivers.some((x) => (x.requests.get(k) ?? 0) > 1)).length;
  const faultCounts: Record<string, number> = {};
  for (const f of faults) if (!f.details.error) faultCounts[f.kind] = (faultCounts[f.kind] ?? 0) + 1;
  faultCounts.leases_expired = faults.reduce((a, f) => a + Number(f.details.leasesExpired ?? 0), 0);
  const fl = s.fleet;
  return {
    ok: invariants.every((i) => i.ok),
    runId: run.runId,
    seed: o.seed,
    postgresVersion: s.postgresVersion,
    startedAt: new Date(run.started).toISOString(),
    finishedAt: new Date().toISOString(),
    options: { ...o, log: undefined } as unknown as Omit<ChaosOptions, "log">,
    subscriptions: s.subs.map((x) => ({ id: x.id, behavior: x.behavior, does: BEHAVIORS[x.behavior] })),
    faults: { injected: faults, counts: faultCounts },
    traffic: {
      eventsPublished: traffic.stats.published,
      publishSeconds: Math.round((publishEnded - traffic.trafficStart) / 100) / 10,
      publishRetries: traffic.stats.publishRetries,
      deliveries,
      deadLetterReasons,
      attemptsByOutcome,
    },
    receivers: receivers.map((x) => ({
      subscriptionId: x.subscriptionId,
      behavior: x.behavior,
      requests: x.requestCount,
      keysSeen: x.requests.size,
      applied: x.applied.size,
      duplicatesSuppressed: x.suppressed,
      answered: x.answered,
      earlyAfter429: x.earlyAfter429,
    })),
    duplicatesSuppressedTotal: receivers.reduce((a, x) => a + x.suppressed, 0),
    ambiguousAttempts: { total: Object.values(ambiguousByClass).reduce((a, n) => a + Number(n), 0), byErrorClass: ambiguousByClass },
    forcedDuplicateClaims: { leasesExpired: faultCounts.leases_expired, keysSentTwiceOrMore: sentTwice },
    redrive,
    workers: { spawned: fl.all.length, killed: fl.all.filter((w) => w.killedByUs).length, exitsAtEnd: r.exits.exitsAtEnd, unexpectedExits: r.exits.unexpectedExits },
    timing: {
      lastFaultAtSeconds: secs(lastFaultEnd),
      publishEndedAtSeconds: secs(publishEnded),
      drainedAtSeconds: drainedAt ? secs(drainedAt) : null,
      timeToDrainAfterTrafficSeconds: drainedAt ? Math.round((drainedAt - publishEnded) / 100) / 10 : null,
      timeToDrainSeconds: drainedAt ? Math.round((drainedAt - Math.max(lastFaultEnd, 0)) / 100) / 10 : null,
      totalSeconds: secs(Date.now()),
    },
    invariants,
    findings: run.findings,
    runDir: run.runDir,
  };
}

function workerCheck(name: string, description: string, offenders: Offender[]): InvariantResult {
  return { name, description, ok: offenders.length === 0, count: offenders.length, offenders };
}

/** The report as text: the numbers, then every broken invariant with the deliveries that broke it. */
export function formatReport(r: ChaosReport, maxOffenders = 20): string {
  const out: string[] = [];
  out.push(`chaos run ${r.runId} (seed ${r.seed}, PostgreSQL ${r.postgresVersion}): ${r.ok ? "PASS" : "FAIL"}`);
  out.push(
    `  traffic: ${r.traffic.eventsPublished} events × ${r.subscriptions.length} subscriptions in ${r.traffic.publishSeconds} s; deliveries ${JSON.stringify(r.traffic.deliveries)}; dead letters ${JSON.stringify(r.traffic.deadLetterReasons)}`,
  );
  out.push(`  attempts: ${JSON.stringify(r.traffic.attemptsByOutcome)}; ambiguous ${r.ambiguousAttempts.total} ${JSON.stringify(r.ambiguousAttempts.byErrorClass)}`);
  out.push(`  faults: ${JSON.stringify(r.faults.counts)}; workers spawned ${r.workers.spawned}, SIGKILLed ${r.workers.killed}`);
  const restart = r.faults.injected.find((f) => f.kind === "postgres_restart");
  if (restart) out.push(`  postgres restart: ${JSON.stringify(restart.details)}`);
  out.push(
    `  forced duplicate claims: ${r.forcedDuplicateClaims.leasesExpired} leases expired early, ${r.forcedDuplicateClaims.keysSentTwiceOrMore} of those keys sent twice or more`,
  );
  out.push(`  duplicates suppressed at the receivers: ${r.duplicatesSuppressedTotal} (${r.receivers.map((x) => `${x.behavior} ${x.duplicatesSuppressed}`).join(", ")})`);
  out.push(`  requests seen: ${r.receivers.map((x) => `${x.behavior} ${x.requests}`).join(", ")}`);
  const t429 = r.receivers.find((x) => x.behavior === "throttle429");
  if (t429) out.push(`  429 with Retry-After: 1: ${t429.answered.s429} answered; ${t429.earlyAfter429} requests came back sooner than 1 s (reaped leases retry at once)`);
  if (r.redrive) out.push(`  redrive: ${JSON.stringify(r.redrive)}`);
  out.push(
    `  timing: last fault at ${r.timing.lastFaultAtSeconds} s, last event published at ${r.timing.publishEndedAtSeconds} s; ` +
      (r.timing.timeToDrainSeconds === null
        ? "NOT drained within the bound"
        : `drained ${r.timing.timeToDrainSeconds} s after the last fault (${r.timing.timeToDrainAfterTrafficSeconds} s after the last event)`) +
      `; total ${r.timing.totalSeconds} s`,
  );
  for (const i of r.invariants) {
    out.push(`  ${i.ok ? "ok  " : "FAIL"} ${i.name}: ${i.description}${i.ok ? "" : ` (${i.count} offenders)`}`);
    if (!i.ok)
      for (const x of i.offenders.slice(0, maxOffenders))
        out.push(`         ${x.deliveryId ? `delivery ${x.deliveryId} ` : ""}${x.key ? `key ${x.key.slice(0, 16)}… ` : ""}${x.detail}`);
  }
  for (const f of r.findings) out.push(`  finding: ${f}`);
  return out.join("\n");
}
