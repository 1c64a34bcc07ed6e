// 8. Ingest: events per second through POST /api/v1/events, each fanned out
// to 3 subscriptions, over real HTTP; and through POST /api/v1/events/batch in
// batches of 500 sent with the typed client (@hookledger/client), as a backfill
// would. Served by the route handler mounted in a node:http server
// (bench/bare-ingest-server.ts); when a build exists, by server.ts (what
// `hookledger start` and `npm start` run: the publish routes beside Next's
// request handler on one port) and by plain `next start`; beside each, the
// same server's no-op reference (for server.ts and next start that is Next's
// own answer for a path without a route, its 404). Each server is measured on
// a fresh ledger of its own, and each measurement says what the ledger held
// when it started.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { Pool } from "undici";
import type { BenchPg } from "../lib/pg";
import { ROOT, sleep, startChild, type Child } from "../lib/proc";
import { createSubs, pollUntil } from "../lib/seed";
import { round, summary } from "../lib/stats";
import { resetStatements, topStatements } from "../lib/pgstat";
import { createPrisma } from "../../lib/db/prisma";
import { createApiToken } from "../../lib/auth/tokens";
import { freePort } from "../../lib/db/embedded";
import { profileOf } from "../lib/cpuprofile";
import { cpuMeter } from "../lib/cpu";
import { HookledgerClient } from "../../client/src/index";
import { SERVER_NODE_FLAGS } from "../../lib/server/node-flags";

/** The bench's event: a grade for one of 5,000 students and 40 assignments, of tenant lincoln. */
const benchEvent = (prefix: string, i: number) => ({
  id: `${prefix}${i}`,
  type: "assignment.graded",
  data: { studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}`, score: i % 100, comment: "Well argued; cite the second source." },
  subject: { tenant: "lincoln", studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}` },
});

/** One event a request to `path`, `concurrency` requests in flight, bounded in count and time. */
export async function load(port: number, opts: { path: string; token: string; events: number; concurrency: number; prefix: string; maxSeconds?: number }) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: opts.concurrency, pipelining: 1 });
  const statuses: Record<string, number> = {};
  const ms: number[] = [];
  let next = 0;
  const one = async (i: number) => {
    const body = JSON.stringify(benchEvent(opts.prefix, i));
    const t = performance.now();
    const r = await pool.request({
      path: opts.path,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${opts.token}` },
      body,
    });
    await r.body.dump();
    ms.push(performance.now() - t);
    statuses[r.statusCode] = (statuses[r.statusCode] ?? 0) + 1;
  };
  const t0 = performance.now();
  // Bounded in count and in time: a slow server gets fewer events, not a longer run.
  const deadline = t0 + (opts.maxSeconds ?? 30) * 1000;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.events && performance.now() < deadline) await one(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return { events: next, concurrency: opts.concurrency, seconds: round(seconds, 2), perSecond: round(next / seconds), statuses, latencyMs: summary(ms) };
}

/** Batches of `batchSize` through the typed client, `concurrency` requests in flight, bounded in count and time. */
export async function loadBatches(
  port: number,
  opts: {
    token: string;
    events: number;
    batchSize: number;
    concurrency: number;
    prefix: string;
    maxSeconds: number;
    fetch?: typeof fetch;
    /** false: answers without deliveries, as `hookledger publish --file` asks for them. */
    deliveries?: boolean;
  },
) {
  const client = new HookledgerClient({ baseUrl: `http://127.0.0.1:${port}`, token: opts.token, timeoutMs: 60_000, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const outcome = { created: 0, duplicate: 0, failed: 0 };
  const ms: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const deadline = t0 + opts.maxSeconds * 1000;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.events && performance.now() < deadline) {
        const first = next;
        next = Math.min(opts.events, next + opts.batchSize);
        const events = Array.from({ length: next - first }, (_, k) => benchEvent(opts.prefix, first + k));
        const t = performance.now();
        const r = opts.deliveries === false ? await client.publishBatch(events, { deliveries: false }) : await client.publishBatch(events);
        ms.push(performance.now() - t);
        for (const x of r.results) {
          if ("error" in x) outcome.failed++;
          else outcome[x.status]++;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    events: next,
    batchSize: opts.batchSize,
    concurrency: opts.concurrency,
    answers: opts.deliveries === false ? "status only (deliveries=false)" : "with deliveries",
    seconds: round(seconds, 2),
    perSecond: round(next / seconds),
    ...outcome,
    batchLatencyMs: summary(ms),
  };
}

async function measureBatch(
  server: { port: number; child: Child },
  db: pg.Pool,
  benchPg: BenchPg,
  opts: { token: string; events: number; label: string; deliveries: boolean; maxSeconds: number },
) {
  const port = server.port;
  const deliveries = opts.deliveries;
  await loadBatches(port, { token: opts.token, events: 2_000, batchSize: 500, concurrency: 2, prefix: `warmb_${opts.label}_`, maxSeconds: 10, deliveries });
  const before = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
  const meter = cpuMeter({ server: [server.child.pid], bench: [process.pid] }, benchPg.postmasterPid());
  const r = await loadBatches(port, {
    token: opts.token,
    events: opts.events,
    batchSize: 500,
    concurrency: 4,
    prefix: `bat_${opts.label}_`,
    maxSeconds: opts.maxSeconds,
    deliveries,
  });
  const cpu = meter();
  const after = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
  return { ...r, deliveriesWritten: after - before, fanOut: round((after - before) / r.events, 2), cpuDuringRun: cpu };
}

async function measure(
  server: { port: number; child: Child },
  db: pg.Pool,
  benchPg: BenchPg,
  opts: { token: string; events: number; concurrency: number; label: string; whatIf?: boolean },
) {
  // Warm-up: connections, JIT, Prisma's first queries (and Next's route compilation).
  await load(server.port, { path: "/api/v1/events", token: opts.token, events: 200, concurrency: 8, prefix: `warm_${opts.label}_`, maxSeconds: 10 });
  await load(server.port, { path: "/noop", token: opts.token, events: 200, concurrency: 8, prefix: `warmnoop_${opts.label}_`, maxSeconds: 5 });
  await resetStatements(db, benchPg.statStatements);
  const before = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
  const meter = cpuMeter({ server: [server.child.pid], bench: [process.pid] }, benchPg.postmasterPid());
  const real = await load(server.port, {
    path: "/api/v1/events",
    token: opts.token,
    events: opts.events,
    concurrency: opts.concurrency,
    prefix: `evt_${opts.label}_`,
    maxSeconds: 20,
  });
  const cpu = meter();
  const statements = await topStatements(db, benchPg.statStatements, 8);
  const after = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
  const reference = await load(server.port, {
    path: "/noop",
    token: opts.token,
    events: opts.events,
    concurrency: opts.concurrency,
    prefix: `noop_${opts.label}_`,
    maxSeconds: 10,
  });
  let whatIf: Record<string, unknown> | undefined;
  if (opts.whatIf) {
    await load(server.port, { path: "/what-if/one-statement", token: opts.token, events: 200, concurrency: 8, prefix: `warmone_${opts.label}_`, maxSeconds: 5 });
    const b2 = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
    const one = await load(server.port, {
      path: "/what-if/one-statement",
      token: opts.token,
      events: opts.events,
      concurrency: opts.concurrency,
      prefix: `one_${opts.label}_`,
      maxSeconds: 10,
    });
    const a2 = (await db.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n as number;
    whatIf = {
      oneStatementRawPg: { ...one, fanOut: round((a2 - b2) / one.events, 2), ratioToReference: round(one.perSecond / reference.perSecond, 3) },
      note: "bench/bare-ingest-server.ts /what-if/one-statement: one statement per event, no grouping (the earlier sketch); the route groups concurrent events (lib/events/ingest.ts)",
    };
  }
  const peakRssMb = server.child.peakRssMb();
  return {
    ...(whatIf ? { whatIf } : {}),
    ...real,
    deliveriesWritten: after - before,
    fanOut: round((after - before) / real.events, 2),
    referenceNoopPerSecond: reference.perSecond,
    ratioToReference: round(real.perSecond / reference.perSecond, 3),
    serverPeakRssMb: peakRssMb,
    cpuDuringRun: cpu,
    topStatements: statements,
  };
}

/** What the ledger holds when a measurement starts: the servers are compared on equal ledgers. */
async function ledgerSize(db: pg.Pool) {
  const r = await db.query("SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries");
  return r.rows[0] as { events: number; deliveries: number };
}

/**
 * A fresh ledger from the migrated template: the bench's five subscriptions and a producer token. Each server gets
 * its own, so none is measured on the tables the one before it grew (an enqueue into a ledger of 300,000 events
 * costs Postgres more than into an empty one; bench/measure-server-ingest.ts's rounds show how much).
 */
export async function freshLedger(benchPg: BenchPg, name: string) {
  const url = await benchPg.create(name);
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {});
  await createSubs(
    db,
    ["sub_lincoln_sis", "sub_lincoln_lms", "sub_analytics"].map((id, i) => ({ id, url: `https://${id}.example.test/hooks`, tenant: i < 2 ? "lincoln" : null })),
  );
  // A few other districts' subscriptions that must not match.
  await createSubs(
    db,
    ["sub_jefferson", "sub_madison"].map((id) => ({ id, url: `https://${id}.example.test/hooks`, tenant: id.slice(4) })),
  );
  const prisma = createPrisma(url);
  const { token } = await createApiToken(prisma, { role: "producer", name: "bench-producer" });
  await prisma.$disconnect();
  return {
    url,
    db,
    token,
    env: { DATABASE_URL: url, LOG_LEVEL: "warn", HOOKLEDGER_SAMPLER: "0" },
    async close() {
      await db.end();
      await benchPg.drop(url);
    },
  };
}

export async function runIngest(benchPg: BenchPg, opts: { events: number; concurrency: number; tryNext: boolean; cpuProfDir?: string }, log: (m: string) => void) {
  const out: Record<string, unknown> = {};
  {
    const { db, token, env, close } = await freshLedger(benchPg, "ingest_handler");
    try {
      const handler = startChild(["bin/run-ts.mjs", "bench/bare-ingest-server.ts"], { name: "ingest server", env, nodeArgs: SERVER_NODE_FLAGS });
      try {
        const port = Number((await handler.waitFor(/^READY (\d+)/, 60_000))[1]);
        out.routeHandlerInNodeHttp = {
          server: "app/api/v1/events/route.ts POST mounted in node:http (bench/bare-ingest-server.ts), separate process",
          ledgerAtStart: await ledgerSize(db),
          ...(await measure({ port, child: handler }, db, benchPg, { token, events: opts.events, concurrency: opts.concurrency, label: "h", whatIf: true })),
        };
        out.batchRouteHandlerInNodeHttp = {
          server: "app/api/v1/events/batch/route.ts POST in the same node:http server; batches of 500 through @hookledger/client, 4 in flight",
          ledgerAtStart: await ledgerSize(db),
          ...(await measureBatch({ port, child: handler }, db, benchPg, { token, events: opts.events * 10, label: "h", deliveries: false, maxSeconds: 20 })),
        };
      } finally {
        await handler.stop(3000);
      }
      if (opts.cpuProfDir) {
        // A second, profiled run of the handler server: where its CPU goes.
        const prof = startChild(["bin/run-ts.mjs", "bench/bare-ingest-server.ts"], {
          name: "ingest server (profiled)",
          env,
          nodeArgs: [...SERVER_NODE_FLAGS, "--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`],
        });
        try {
          const port = Number((await prof.waitFor(/^READY (\d+)/, 60_000))[1]);
          await load(port, { path: "/api/v1/events", token, events: Math.min(opts.events, 5_000), concurrency: opts.concurrency, prefix: "prof_", maxSeconds: 6 });
        } finally {
          await prof.stop(5000);
        }
        out.routeHandlerCpuProfile = profileOf(opts.cpuProfDir, prof.pid);
      }
    } finally {
      await close();
    }
  }

  const buildId = path.join(ROOT, ".next", "BUILD_ID");
  if (!opts.tryNext || !fs.existsSync(buildId)) return out;
  const buildAt = fs.statSync(buildId).mtime.toISOString();
  {
    // server.ts as `hookledger start` runs it: single publish beside Next's 404 path in the same
    // process, then batches of 500 through the typed client.
    const { db, token, env, close } = await freshLedger(benchPg, "ingest_server_ts");
    try {
      const cport = await freePort();
      const server = startChild(["bin/run-ts.mjs", "server.ts", "-p", String(cport), "-H", "127.0.0.1"], {
        name: "server.ts",
        env: { ...env, NEXT_TELEMETRY_DISABLED: "1" },
        nodeArgs: SERVER_NODE_FLAGS,
      });
      try {
        await server.waitFor(/listening on/, 90_000);
        out.customServer = {
          server: `server.ts (hookledger start's dashboard; the .next build of ${buildAt}), separate process; reference: Next's 404 path in the same process`,
          ledgerAtStart: await ledgerSize(db),
          ...(await measure({ port: cport, child: server }, db, benchPg, { token, events: opts.events, concurrency: opts.concurrency, label: "c" })),
        };
        out.batchCustomServer = {
          server:
            "server.ts, POST /api/v1/events/batch?deliveries=false (as hookledger publish --file sends them); batches of 500 through @hookledger/client, 4 in flight",
          ledgerAtStart: await ledgerSize(db),
          ...(await measureBatch({ port: cport, child: server }, db, benchPg, { token, events: opts.events * 10, label: "c", deliveries: false, maxSeconds: 20 })),
        };
        out.batchCustomServerFullAnswers = {
          server: "server.ts, POST /api/v1/events/batch, each result with its deliveries; batches of 500 through @hookledger/client, 4 in flight",
          ledgerAtStart: await ledgerSize(db),
          ...(await measureBatch({ port: cport, child: server }, db, benchPg, { token, events: opts.events * 5, label: "cf", deliveries: true, maxSeconds: 10 })),
        };
      } catch (err) {
        out.customServer = { error: (err as Error).message };
        log(`ingest: server.ts: ${(err as Error).message}`);
      } finally {
        await server.stop(5000);
        await sleep(200);
      }
      if (opts.cpuProfDir) {
        // A second, profiled server.ts: where its CPU goes under single publishes, then under batches.
        const pport = await freePort();
        const prof = startChild(["bin/run-ts.mjs", "server.ts", "-p", String(pport), "-H", "127.0.0.1"], {
          name: "server.ts (profiled)",
          env: { ...env, NEXT_TELEMETRY_DISABLED: "1" },
          nodeArgs: [...SERVER_NODE_FLAGS, "--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`],
        });
        try {
          await prof.waitFor(/listening on/, 90_000);
          await load(pport, { path: "/api/v1/events", token, events: Math.min(opts.events, 5_000), concurrency: opts.concurrency, prefix: "cprof_", maxSeconds: 6 });
          await loadBatches(pport, { token, events: 10_000, batchSize: 500, concurrency: 4, prefix: "cprofb_", maxSeconds: 6 });
        } catch (err) {
          log(`ingest: server.ts (profiled): ${(err as Error).message}`);
        } finally {
          await prof.stop(5000);
        }
        out.customServerCpuProfile = profileOf(opts.cpuProfDir, prof.pid);
      }
    } finally {
      await close();
    }
  }
  {
    const { db, token, env, close } = await freshLedger(benchPg, "ingest_next_start");
    try {
      const port = await freePort();
      const next = startChild([path.join(ROOT, "node_modules", "next", "dist", "bin", "next"), "start", "-p", String(port), "-H", "127.0.0.1"], {
        name: "next start",
        env: { ...env, PORT: String(port), NODE_ENV: "production" },
      });
      try {
        const ready = await pollUntil(
          async () => {
            try {
              const r = await fetch(`http://127.0.0.1:${port}/api/health`);
              return r.status > 0;
            } catch {
              return false;
            }
          },
          60_000,
          250,
        );
        if (!ready) throw new Error(`next start did not answer within 60 s:\n${next.tail()}`);
        out.nextStart = {
          server: `next start (the existing .next build of ${buildAt}), separate process; reference: no-op is not a Next route, so it is the 404 path`,
          ledgerAtStart: await ledgerSize(db),
          ...(await measure({ port, child: next }, db, benchPg, { token, events: opts.events, concurrency: opts.concurrency, label: "n" })),
        };
      } catch (err) {
        out.nextStart = { error: (err as Error).message };
        log(`ingest: next start: ${(err as Error).message}`);
      } finally {
        await next.stop(3000);
        await sleep(200);
      }
    } finally {
      await close();
    }
  }
  return out;
}
