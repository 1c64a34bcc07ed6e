// Thousands of endpoints, driven as a new user drives hookledger:
// subscriptions created through POST /api/v1/subscriptions, events published
// through POST /api/v1/events/batch (both the real route handlers, in
// bench/bare-ingest-server.ts), a real local receiver, one worker process.
// Four drains of the same backlog, taking turns in each round:
//   base     20 endpoints, nothing else
//   idleN    the same 20 beside N idle subscriptions (active, their own districts, nothing queued)
//   spread   the backlog spread over deliveries / 8 endpoints, 8 deliveries each
// Each drain's figure is deliveries per second from its first attempt to its
// last delivered row, as the drain step's; what counts is its ratio to the
// 20-endpoint drain of the same round. Each variant's subscriptions are made
// once, on a database that each round then clones (CREATE DATABASE … TEMPLATE),
// so every drain starts on a ledger holding only its own backlog.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { startChild, type Child, type Receiver } from "../lib/proc";
import { countState, pollUntil } from "../lib/seed";
import { startWorkers } from "../lib/workers";
import { cpuMeter } from "../lib/cpu";
import { round } from "../lib/stats";
import { createPrisma } from "../../lib/db/prisma";
import { createApiToken } from "../../lib/auth/tokens";
import { HookledgerClient } from "../../client/src/index";
import { SERVER_NODE_FLAGS } from "../../lib/server/node-flags";

export type EndpointsOpts = {
  /** Deliveries in each drain's backlog (one per event). */
  deliveries: number;
  /** Idle subscriptions beside the 20 busy ones, one drain per size. */
  idle: number[];
  /** Deliveries per endpoint in the spread drain (5,000 endpoints × 8 at 40,000). */
  perSpreadEndpoint: number;
  rounds: number;
  timeoutMs: number;
  /** How the idle subscriptions are made ("api": through POST /api/v1/subscriptions; "sql": inserted, said in the result). The busy ones always go through the API. */
  idleVia: "api" | "sql";
};

/** Requests in flight while creating subscriptions and publishing: what a script with a small pool would do. */
const API_CONCURRENCY = 8;
/** Events per POST /api/v1/events/batch (its maximum). */
const BATCH = 500;
const BUSY = 20;
/** Each idle district has this many endpoints (SIS, LMS, gradebook…). */
const IDLE_PER_DISTRICT = 5;
const TARGETS: Record<string, number> = { idle5000: 0.9, idle50000: 0.8, spread: 0.8 };

type Variant = { name: string; label: string; busy: number; idle: number; template?: string; setup?: Record<string, unknown> };
type Run = {
  round: number;
  completed: boolean;
  perSecond: number | null;
  ingest?: Record<string, unknown>;
  workerUsPerDelivery?: number | null;
  postgresUsPerDelivery?: number | null;
  error?: string;
};

async function admin<T>(benchPg: BenchPg, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: benchPg.adminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function dbUrl(benchPg: BenchPg, name: string) {
  const u = new URL(benchPg.adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function startApi(url: string): Promise<{ child: Child; port: number }> {
  const child = startChild(["bin/run-ts.mjs", "bench/bare-ingest-server.ts"], {
    name: "api server",
    env: { DATABASE_URL: url, LOG_LEVEL: "warn", HOOKLEDGER_SAMPLER: "0", HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1" },
    nodeArgs: SERVER_NODE_FLAGS,
  });
  const port = Number((await child.waitFor(/^READY (\d+)/, 60_000))[1]);
  return { child, port };
}

/** `count` jobs, `API_CONCURRENCY` at a time. */
async function lanes(count: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: API_CONCURRENCY }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

const busyId = (i: number, busy: number) => `sub_${String(i + 1).padStart(String(busy).length, "0")}`;

/** The variant's subscriptions on a database of its own, which the rounds clone. */
async function prepare(benchPg: BenchPg, receiver: Receiver, v: Variant, idleVia: EndpointsOpts["idleVia"], tokens: Map<string, string>) {
  const url = await benchPg.create(`endpoints_${v.name}`);
  v.template = new URL(url).pathname.slice(1);
  const prisma = createPrisma(url);
  const { token } = await createApiToken(prisma, { role: "admin", name: "bench-admin" });
  await prisma.$disconnect();
  tokens.set(v.name, token);
  const api = await startApi(url);
  try {
    const client = new HookledgerClient({ baseUrl: `http://127.0.0.1:${api.port}`, token, timeoutMs: 60_000 });
    const t0 = performance.now();
    // The busy endpoints: a district each, so that an event (its subject's tenant) goes to exactly one.
    await lanes(v.busy, async (i) => {
      const id = busyId(i, v.busy);
      await client.subscriptions.create({ id, name: `District ${i + 1} SIS`, url: receiver.url(`ok/${id}`), eventTypes: ["assignment.graded"], tenant: `dist_${i + 1}` });
    });
    const busySeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const idleId = (k: number) => `idle_${String(k + 1).padStart(6, "0")}`;
    if (v.idle > 0 && idleVia === "api")
      await lanes(v.idle, async (k) => {
        await client.subscriptions.create({
          id: idleId(k),
          name: `Idle district ${Math.floor(k / IDLE_PER_DISTRICT) + 1} endpoint ${(k % IDLE_PER_DISTRICT) + 1}`,
          url: receiver.url(`idle/${idleId(k)}`),
          eventTypes: ["assignment.graded"],
          tenant: `idle_${Math.floor(k / IDLE_PER_DISTRICT) + 1}`,
        });
      });
    else if (v.idle > 0) {
      const db = new pg.Pool({ connectionString: url, max: 1 });
      await db.query(
        `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, retry_policy, max_concurrency)
         SELECT 'idle_' || lpad(g::text, 6, '0'), 'Idle district ' || ((g - 1) / $3 + 1) || ' endpoint ' || ((g - 1) % $3 + 1),
                'idle_' || ((g - 1) / $3 + 1), $2 || lpad(g::text, 6, '0'), '{assignment.graded}', 'active', '{}', 10
           FROM generate_series(1, $1::int) g`,
        [v.idle, receiver.url("idle/idle_"), IDLE_PER_DISTRICT],
      );
      await db.end();
    }
    const idleSeconds = (performance.now() - t1) / 1000;
    // What autovacuum does a minute after a bulk of new subscriptions, done now: without statistics on `subscriptions`
    // the enqueue's match join tests every subscription for every event (500 events × 50,020 subscriptions: 21 s
    // before ANALYZE, 5 ms after), and each round's clone would publish at that speed.
    const stats = new pg.Client({ connectionString: url });
    await stats.connect();
    await stats.query("VACUUM ANALYZE subscriptions");
    await stats.end();
    v.setup = {
      busyEndpoints: v.busy,
      busyCreatedVia: "POST /api/v1/subscriptions",
      busySeconds: round(busySeconds, 1),
      busyPerSecond: round(v.busy / busySeconds),
      idleSubscriptions: v.idle,
      ...(v.idle > 0
        ? {
            idleCreatedVia:
              idleVia === "api" ? "POST /api/v1/subscriptions" : "SQL INSERT … generate_series (the API creates a few dozen a second; --idle-via api uses it)",
            idleSeconds: round(idleSeconds, 1),
            idlePerSecond: round(v.idle / idleSeconds),
          }
        : {}),
      apiConcurrency: API_CONCURRENCY,
    };
  } finally {
    await api.child.stop(5_000);
  }
}

/** The round's events through POST /api/v1/events/batch: event g goes to busy endpoint g mod busy, through its district. */
async function publish(port: number, token: string, v: Variant, deliveries: number, r: number) {
  const client = new HookledgerClient({ baseUrl: `http://127.0.0.1:${port}`, token, timeoutMs: 120_000 });
  const comment = "x".repeat(1024 - 230);
  let created = 0;
  const t0 = performance.now();
  await lanes(Math.ceil(deliveries / BATCH), async (b) => {
    const events = [];
    for (let g = b * BATCH; g < Math.min(deliveries, (b + 1) * BATCH); g++) {
      const i = g % v.busy;
      events.push({
        id: `evt_r${r}_${g}`,
        type: "assignment.graded",
        data: { studentId: `stu_${g}`, assignmentId: `asg_${g % 40}`, score: g % 100, comment },
        subject: { tenant: `dist_${i + 1}`, studentId: `stu_${g}` },
      });
    }
    const res = await client.publishBatch(events, { deliveries: false });
    for (const x of res.results) if (!("error" in x) && x.status === "created") created++;
  });
  const seconds = (performance.now() - t0) / 1000;
  if (created !== deliveries) throw new Error(`published ${created} of ${deliveries} events`);
  return { events: created, seconds: round(seconds, 1), perSecond: round(created / seconds) };
}

async function drainOnce(benchPg: BenchPg, receiver: Receiver, v: Variant, opts: EndpointsOpts, r: number, token: string): Promise<Run> {
  const name = `${v.template}_r${r}`;
  await admin(benchPg, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${v.template}`));
  const url = dbUrl(benchPg, name);
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {});
  try {
    const api = await startApi(url);
    let ingest;
    try {
      ingest = await publish(api.port, token, v, opts.deliveries, r);
    } finally {
      await api.child.stop(5_000);
    }
    const queued = await countState(db, "pending");
    if (queued !== opts.deliveries) throw new Error(`${queued} deliveries queued for ${opts.deliveries} events`);
    // As the drain step leaves its backlog: statistics fresh, no checkpoint pending.
    await db.query("VACUUM ANALYZE");
    await db.query("CHECKPOINT").catch(() => {});
    const workers = await startWorkers(db, url, 1);
    // From the worker's heartbeat (its first claims may be under way) to the last delivery: the same for every variant.
    const meter = cpuMeter({ workers: workers.children.map((c) => c.pid), receiver: [receiver.child.pid], bench: [process.pid] }, benchPg.postmasterPid());
    let done: boolean;
    let cpu: ReturnType<typeof meter>;
    try {
      done = await pollUntil(async () => (await countState(db, "delivered")) >= opts.deliveries, opts.timeoutMs, 100);
      cpu = meter();
    } finally {
      await workers.stop();
    }
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM deliveries WHERE state = 'delivered') AS delivered,
              (SELECT min(started_at) FROM attempts) AS first_attempt, (SELECT max(delivered_at) FROM deliveries) AS last_delivered`,
    );
    const seconds = (rows[0].last_delivered.getTime() - rows[0].first_attempt.getTime()) / 1000;
    const per = (cores: number | undefined) => (typeof cores === "number" ? Math.round(((cores * cpu.wallSeconds) / opts.deliveries) * 1e6) : null);
    return {
      round: r,
      completed: done,
      perSecond: round(rows[0].delivered / seconds),
      ingest,
      workerUsPerDelivery: per(cpu.coresUsed.workers),
      postgresUsPerDelivery: per(cpu.coresUsed.postgres),
    };
  } finally {
    await db.end();
    await benchPg.drop(url);
  }
}

const median = (xs: number[]) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function runEndpoints(benchPg: BenchPg, receiver: Receiver, opts: EndpointsOpts, log: (m: string) => void) {
  const spread = Math.max(1, Math.round(opts.deliveries / opts.perSpreadEndpoint));
  const variants: Variant[] = [
    { name: "base", label: `${BUSY} endpoints, nothing else`, busy: BUSY, idle: 0 },
    ...opts.idle.map((n) => ({ name: `idle${n}`, label: `the same ${BUSY} beside ${n.toLocaleString("en")} idle subscriptions`, busy: BUSY, idle: n })),
    { name: "spread", label: `spread over ${spread.toLocaleString("en")} endpoints, ${opts.perSpreadEndpoint} each`, busy: spread, idle: 0 },
  ];
  const tokens = new Map<string, string>();
  const templates: string[] = [];
  try {
    for (const v of variants) {
      await prepare(benchPg, receiver, v, opts.idleVia, tokens);
      templates.push(dbUrl(benchPg, v.template!));
      log(`endpoints: ${v.name} ready: ${JSON.stringify(v.setup)}`);
    }
    const runs: Record<string, Run[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
    const order: string[][] = [];
    for (let r = 1; r <= opts.rounds; r++) {
      const turn = variants.map((_, i) => variants[(i + r - 1) % variants.length]);
      order.push(turn.map((v) => v.name));
      for (const v of turn) {
        let run: Run;
        try {
          run = await drainOnce(benchPg, receiver, v, opts, r, tokens.get(v.name)!);
        } catch (err) {
          run = { round: r, completed: false, perSecond: null, error: (err as Error).message.slice(0, 2_000) };
        }
        runs[v.name].push(run);
        log(`endpoints round ${r}: ${v.name} ${run.error ? `failed: ${run.error.split("\n")[0]}` : `${run.perSecond}/s${run.completed ? "" : " (incomplete)"}`}`);
      }
    }
    return summarize(variants, runs, order, opts, log);
  } finally {
    for (const t of templates) await benchPg.drop(t);
  }
}

function summarize(variants: Variant[], runs: Record<string, Run[]>, order: string[][], opts: EndpointsOpts, log: (m: string) => void) {
  const medianOf = (name: string) => median(runs[name].filter((x) => x.completed && x.perSecond !== null).map((x) => x.perSecond!));
  const base = medianOf("base");
  const out: Record<string, unknown> = {};
  const lines: string[] = [];
  for (const v of variants) {
    const m = medianOf(v.name);
    const ratio = v.name !== "base" && base && m ? round(m / base, 2) : null;
    // The ratio within each round, where the drains ran minutes apart: how much of the spread is the machine.
    const roundRatios = runs[v.name].map((x, i) => {
      const b = runs.base[i];
      return x.completed && b?.completed && x.perSecond && b.perSecond ? round(x.perSecond / b.perSecond, 2) : null;
    });
    const target = TARGETS[v.name] ?? null;
    out[v.name] = {
      label: v.label,
      setup: v.setup,
      medianPerSecond: m,
      ratioToBase: ratio,
      roundRatios: v.name === "base" ? undefined : roundRatios,
      target,
      met: target !== null && ratio !== null ? ratio >= target : null,
      runs: runs[v.name],
    };
    lines.push(`${v.label}: ${m ?? "—"}/s${ratio !== null ? ` (${ratio}× the 20-endpoint drain${target !== null ? `, target ≥ ${target}×` : ""})` : ""}`);
  }
  log(`endpoints: ${lines.join("; ")}`);
  return {
    deliveries: opts.deliveries,
    rounds: opts.rounds,
    order,
    measure: "deliveries per second from the first attempt to the last delivered row, one worker process (node bin/hookledger.mjs worker), default settings",
    driven: `subscriptions through POST /api/v1/subscriptions and events through POST /api/v1/events/batch (${BATCH} a request, ${API_CONCURRENCY} in flight), route handlers in node:http (bench/bare-ingest-server.ts); the receiver answers 204`,
    variants: out,
  };
}
