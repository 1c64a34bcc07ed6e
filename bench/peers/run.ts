// Peers: the drain's work (40,000 signed 1 KB webhook POSTs over 20 endpoints to
// the same local receiver) done by hookledger's one-worker drain, by pg-boss 10
// and by graphile-worker 0.16, in rounds on the same PostgreSQL server, so that
// the three see the same minutes of a machine whose speed moves by tens of
// percent. Each peer gets a fresh database of its own (CREATE DATABASE on the
// bench's server), enqueues its jobs with its own bulk insert, and works them
// off in a process of its own (bench/peers/pg-boss.ts, graphile-worker.ts), as
// the drain's worker is a process of its own. Every system has 200 requests on
// the wire at most (the drain's 20 subscriptions × max_concurrency 10) over 50
// keep-alive connections to the receiver (hookledger's per-origin default).
// The figure is the drain's: jobs per second from the first POST to the last
// job recorded done in the database.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { ROOT, startChild, type Receiver } from "../lib/proc";
import { runDrain } from "../scenarios/drain";
import { cpuMeter } from "../lib/cpu";
import { round } from "../lib/stats";
import type { PeerConfig } from "./webhook";

export type PeersOpts = {
  jobs: number;
  endpoints: number;
  rounds: number;
  timeoutMs: number;
  /** Which systems take part (--peers-systems a,b): the default three, or variants of them (EXTRA_PEERS, OWN_VARIANTS) beside them. */
  systems?: string[];
};

/** The drain's subscriptions have the default max_concurrency of 10 requests each. */
const PER_ENDPOINT = 10;
/** lib/net/sender.ts: keep-alive connections per origin (HOOKLEDGER_CONNECTIONS_PER_ORIGIN's default). */
const CONNECTIONS = 50;

type PeerName = "pg-boss" | "graphile-worker" | "pg-boss-4x50" | "graphile-worker-pool10";
type PeerSpec = { script: string; settings: (concurrency: number) => PeerConfig["settings"] };
const PEERS: Record<PeerName, PeerSpec> = {
  // Two pollers fetching 1,000 jobs a batch, each sending 100 at a time (2 × 100 = 200 on the wire), the fastest
  // of the shapes tried on this bench. Each fetch sorts the queue's whole due backlog (its partial index leads with
  // start_after, not the fetch's priority, created_on order), so Postgres's CPU per job falls with the batch: ~500 µs
  // at batches of 100 on the 40,000-job backlog, ~120 µs at 1,000. Batches of 100 (2 × 100) drained at ~2,800/s
  // where these did ~6,400–7,000/s; 1 × 1,000 sending 200 and 4 × 500 sending 50 came between; 2 × 2,000 was no
  // faster in the one run tried. 0.5 s is pg-boss's shortest polling interval; a full batch skips the wait (notifyWorker). Its pool: the default 10.
  "pg-boss": {
    script: "bench/peers/pg-boss.ts",
    settings: (concurrency) => ({
      workers: 2,
      batchSize: 1_000,
      sendsPerWorker: concurrency / 2,
      pollingIntervalSeconds: 0.5,
      notifyOnFullBatch: true,
      poolSize: 10,
    }),
  },
  // 200 jobs at once in one process, prepared statements (its default), Node's clock for run_at comparisons, the
  // default 2 s poll (a backlog is never polled for: a worker asks again when its job ends), and a pool one larger
  // than its concurrency, as its performance page pairs them (concurrentJobs 24, maxPoolSize 25) so that no job waits
  // for a connection. Against the default pool of 10: 710/s and 633/s against 508/s and 600/s in two runs, no clear gain.
  "graphile-worker": {
    script: "bench/peers/graphile-worker.ts",
    settings: (concurrency) => ({ concurrency, pollInterval: 2_000, useNodeTime: true, preparedStatements: true, poolSize: concurrency + 1 }),
  },
  // Only when named (--peers-systems): the shape the step first ran pg-boss with (65a58cd: four pollers of 50, all
  // sent at once), against which hookledger measured about 1.27×; kept to show where the gap to the 2 × 1,000 shape comes from.
  "pg-boss-4x50": {
    script: "bench/peers/pg-boss.ts",
    settings: (concurrency) => ({
      workers: 4,
      batchSize: concurrency / 4,
      sendsPerWorker: concurrency / 4,
      pollingIntervalSeconds: 0.5,
      notifyOnFullBatch: true,
      poolSize: 10,
    }),
  },
  // Only when named: the pool the step first gave it, node-postgres's default of 10.
  "graphile-worker-pool10": {
    script: "bench/peers/graphile-worker.ts",
    settings: (concurrency) => ({ concurrency, pollInterval: 2_000, useNodeTime: true, preparedStatements: true, poolSize: 10 }),
  },
};
/** The peers a run has unless --peers-systems names others. */
const DEFAULT_PEERS: PeerName[] = ["pg-boss", "graphile-worker"];

/** hookledger's one-worker drain with one of its documented settings changed (README "Worker tuning"), only when named. */
const OWN_VARIANTS: Record<string, Record<string, string>> = {
  hookledger: {},
  // Its largest claim, as pg-boss gets batches of 1,000.
  "hookledger-batch1000": { HOOKLEDGER_WORKER_BATCH: "1000", HOOKLEDGER_WORKER_MAX_IN_FLIGHT: "2000" },
};

type System = string;
const isPeer = (s: string): s is PeerName => s in PEERS;

type CpuReading = ReturnType<ReturnType<typeof cpuMeter>>;

type Run = {
  round: number;
  completed: boolean;
  perSecond: number | null;
  seconds: number | null;
  requestsReceived?: number;
  peakRssMb?: (number | null)[];
  /** CPU per job, µs: the worker process(es) and PostgreSQL, from the CPU meter over the drain. */
  workerUsPerJob?: number | null;
  postgresUsPerJob?: number | null;
  enqueueSeconds?: number;
  check?: Record<string, number>;
  cpu?: CpuReading;
  error?: string;
};

/** The installed version of a package, or of hookledger itself (no name). */
function version(pkg?: string): string {
  return JSON.parse(fs.readFileSync(path.join(ROOT, ...(pkg ? ["node_modules", pkg] : []), "package.json"), "utf8")).version;
}

const usPerJob = (cores: number | undefined, wallSeconds: number, jobs: number) => (typeof cores === "number" ? Math.round(((cores * wallSeconds) / jobs) * 1e6) : null);

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

type DrainResult = { completed: boolean; perSecond: number; seconds: number; requestsReceived: number; peakRssMb: (number | null)[]; cpuDuringDrain: CpuReading };

async function runHookledger(benchPg: BenchPg, receiver: Receiver, opts: PeersOpts, r: number, name: string): Promise<Run> {
  const d = (await runDrain(benchPg, receiver, {
    deliveries: opts.jobs,
    subscriptions: opts.endpoints,
    workers: 1,
    timeoutMs: opts.timeoutMs,
    label: `peers_${name.replace(/\W/g, "_")}_${r}`,
    workerEnv: OWN_VARIANTS[name],
  })) as unknown as DrainResult;
  const cpu = d.cpuDuringDrain;
  return {
    round: r,
    completed: d.completed,
    perSecond: d.perSecond,
    seconds: d.seconds,
    requestsReceived: d.requestsReceived,
    peakRssMb: d.peakRssMb,
    workerUsPerJob: usPerJob(cpu.coresUsed.workers, cpu.wallSeconds, opts.jobs),
    postgresUsPerJob: usPerJob(cpu.coresUsed.postgres, cpu.wallSeconds, opts.jobs),
    cpu,
  };
}

async function runPeer(benchPg: BenchPg, receiver: Receiver, opts: PeersOpts, r: number, name: PeerName): Promise<Run> {
  const db = `hl_peer_${process.pid}_${name.replace(/\W/g, "_")}_${r}`;
  await withClient(benchPg.adminUrl, (c) => c.query(`CREATE DATABASE ${db}`));
  const u = new URL(benchPg.adminUrl);
  u.pathname = `/${db}`;
  const url = u.toString();
  const concurrency = opts.endpoints * PER_ENDPOINT;
  const cfg: PeerConfig = {
    databaseUrl: url,
    jobs: opts.jobs,
    endpoints: Array.from({ length: opts.endpoints }, (_, i) => receiver.url(`ok/sub_${String(i + 1).padStart(2, "0")}`)),
    concurrency,
    connections: CONNECTIONS,
    settings: PEERS[name].settings(concurrency),
  };
  const child = startChild(["bin/run-ts.mjs", PEERS[name].script], { name, env: { PEER_CONFIG: JSON.stringify(cfg) } });
  try {
    const enqueued = JSON.parse((await child.waitFor(/^ENQUEUED (.*)/, opts.timeoutMs))[1]);
    // As the drain's backlog is left before its worker starts: statistics fresh, no checkpoint pending.
    await withClient(url, async (c) => {
      await c.query("VACUUM ANALYZE");
      await c.query("CHECKPOINT").catch(() => {});
    });
    const before = (await receiver.stats()).total;
    const meter = cpuMeter({ workers: [child.pid], receiver: [receiver.child.pid], bench: [process.pid] }, benchPg.postmasterPid());
    const result = child.waitFor(/^RESULT (.*)/, opts.timeoutMs);
    child.proc.kill("SIGUSR2");
    const res = JSON.parse((await result)[1]);
    const cpu = meter();
    const peakRssMb = [child.peakRssMb()];
    return {
      round: r,
      completed: res.ok >= opts.jobs,
      perSecond: res.perSecond,
      seconds: round(res.seconds, 2),
      requestsReceived: (await receiver.stats()).total - before,
      peakRssMb,
      workerUsPerJob: usPerJob(cpu.coresUsed.workers, cpu.wallSeconds, opts.jobs),
      postgresUsPerJob: usPerJob(cpu.coresUsed.postgres, cpu.wallSeconds, opts.jobs),
      enqueueSeconds: enqueued.seconds,
      check: res.check,
      cpu,
    };
  } finally {
    await child.stop(10_000);
    await benchPg.drop(url);
  }
}

function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function runPeers(benchPg: BenchPg, receiver: Receiver, opts: PeersOpts, log: (m: string) => void = () => {}) {
  const systems: System[] = opts.systems ?? ["hookledger", ...DEFAULT_PEERS];
  const unknown = systems.filter((s) => !isPeer(s) && !(s in OWN_VARIANTS));
  if (unknown.length) throw new Error(`--peers-systems: no system ${unknown.join(", ")}; known: ${[...Object.keys(OWN_VARIANTS), ...Object.keys(PEERS)].join(", ")}`);
  const runs: Record<System, Run[]> = Object.fromEntries(systems.map((s) => [s, []]));
  const order: System[][] = [];
  for (let r = 1; r <= opts.rounds; r++) {
    // Each round starts with the next system, so no system always runs first (after the previous step) or last.
    const turn = systems.map((_, i) => systems[(i + r - 1) % systems.length]);
    order.push(turn);
    for (const system of turn) {
      let run: Run;
      try {
        run = isPeer(system) ? await runPeer(benchPg, receiver, opts, r, system) : await runHookledger(benchPg, receiver, opts, r, system);
      } catch (err) {
        run = { round: r, completed: false, perSecond: null, seconds: null, error: (err as Error).message.slice(0, 2_000) };
      }
      runs[system].push(run);
      log(`peers round ${r}: ${system} ${run.error ? `failed: ${run.error.split("\n")[0]}` : `${run.perSecond}/s${run.completed ? "" : " (incomplete)"}`}`);
    }
  }
  const medianOf = (s: System) => median((runs[s] ?? []).filter((x) => x.completed && x.perSecond !== null).map((x) => x.perSecond!));
  const hl = medianOf("hookledger");
  const peerNames = systems.filter(isPeer);
  const ratios = Object.fromEntries(
    peerNames.map((p) => {
      const m = medianOf(p);
      return [p, hl !== null && m ? round(hl / m, 2) : null];
    }),
  );
  // The same ratio within each round, where the systems ran minutes apart: how much of the spread is the machine.
  const roundRatios = Object.fromEntries(
    peerNames.map((p) => [
      p,
      (runs.hookledger ?? []).map((h, i) => {
        const x = runs[p][i];
        return h.completed && x?.completed && h.perSecond && x.perSecond ? round(h.perSecond / x.perSecond, 2) : null;
      }),
    ]),
  );
  // The target is against the default peers at their settings; a variant named beside them is there to explain, not to be beaten.
  const targetPeers = peerNames.filter((p) => DEFAULT_PEERS.includes(p));
  const faster = targetPeers.length ? targetPeers.reduce((a, b) => ((medianOf(b) ?? 0) > (medianOf(a) ?? 0) ? b : a)) : null;
  const overFaster = faster ? ratios[faster] : null;
  const hookledgerSystem = (name: string) => ({
    version: `${version()} (this checkout)`,
    settings: {
      what: `the one-worker drain (bench/scenarios/drain.ts): one worker process, ${Object.keys(OWN_VARIANTS[name]).length ? JSON.stringify(OWN_VARIANTS[name]) : "default settings"}`,
      maxConcurrencyPerSubscription: PER_ENDPOINT,
    },
    medianPerSecond: medianOf(name),
    runs: runs[name],
  });
  return {
    jobs: opts.jobs,
    endpoints: opts.endpoints,
    concurrency: opts.endpoints * PER_ENDPOINT,
    connectionsPerOrigin: CONNECTIONS,
    rounds: opts.rounds,
    order,
    measure: "jobs per second from the first POST to the last job recorded done (hookledger: the first attempt's started_at to the last delivered_at)",
    systems: Object.fromEntries(
      systems.map((s) => [
        s,
        isPeer(s)
          ? {
              version: version(s.startsWith("pg-boss") ? "pg-boss" : "graphile-worker"),
              settings: PEERS[s].settings(opts.endpoints * PER_ENDPOINT),
              medianPerSecond: medianOf(s),
              runs: runs[s],
            }
          : hookledgerSystem(s),
      ]),
    ),
    ratios,
    roundRatios,
    fasterPeer: faster,
    target: 1.5,
    hookledgerOverFasterPeer: overFaster,
    met: overFaster !== null && overFaster >= 1.5,
  };
}
