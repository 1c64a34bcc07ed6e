// Publishes through server.ts (what `hookledger start` runs) round after round,
// each on the same fresh server, and says where each event's CPU went: the
// server, this load generator and Postgres. Narrower and quicker than
// `npm run bench -- --only ingest` (which also measures the bare route and
// next start, on tables grown by the runs before): the way to compare one
// change to the publish path, run against a worktree of the commit before.
//   node bin/run-ts.mjs bench/server-ingest.ts [--rounds K] [--events N] [--single] [--gzip] [--node-flags "…"]
//   --single      one event per request, 32 in flight (default: batches of 500 through the typed client, 4 in flight)
//   --gzip        the batches ask for a gzip answer, as fetch does unless told otherwise (the client asks for none)
//   --node-flags  the server's node flags instead of lib/server/node-flags.ts's (an empty string for none)
// Needs a build (`npm run build`): server.ts hands every other path to Next.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Pool } from "undici";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.LOG_LEVEL ??= "warn";
const { openBenchPg } = await import("./lib/pg");
const { startChild } = await import("./lib/proc");
const { createSubs } = await import("./lib/seed");
const { cpuMeter } = await import("./lib/cpu");
const { argOf: arg } = await import("./lib/variants");
const { createPrisma } = await import("../lib/db/prisma");
const { createApiToken } = await import("../lib/auth/tokens");
const { freePort } = await import("../lib/db/embedded");
const { HookledgerClient } = await import("../lib/client/hookledger");
const { SERVER_NODE_FLAGS } = await import("../lib/server/node-flags");

const rounds = Number(arg("--rounds", "3"));
const events = Number(arg("--events", "60000"));
const single = process.argv.includes("--single");
const gzip = process.argv.includes("--gzip");
const nodeFlags = process.argv.includes("--node-flags") ? arg("--node-flags", "").split(" ").filter(Boolean) : SERVER_NODE_FLAGS;

/** The bench's usual event (bench/scenarios/ingest.ts). */
const event = (prefix: string, i: number) => ({
  id: `${prefix}${i}`,
  type: "assignment.graded",
  data: { studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}`, score: i % 100, comment: "Well argued; cite the second source." },
  subject: { tenant: "lincoln", studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}` },
});

async function batches(port: number, token: string, prefix: string, n: number) {
  const withGzip: typeof fetch = (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), "accept-encoding": "gzip, deflate" } });
  const client = new HookledgerClient({ baseUrl: `http://127.0.0.1:${port}`, token, timeoutMs: 60_000, ...(gzip ? { fetch: withGzip } : {}) });
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        const first = next;
        next = Math.min(n, next + 500);
        const r = await client.publishBatch(Array.from({ length: next - first }, (_, k) => event(prefix, first + k)));
        const failed = r.results.find((x) => "error" in x);
        if (failed) throw new Error(`an event failed: ${JSON.stringify(failed)}`);
      }
    }),
  );
}

async function singles(port: number, token: string, prefix: string, n: number) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32, pipelining: 1 });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < n) {
          const r = await pool.request({
            path: "/api/v1/events",
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            body: JSON.stringify(event(prefix, next++)),
          });
          await r.body.dump();
          if (r.statusCode !== 202) throw new Error(`HTTP ${r.statusCode}`);
        }
      }),
    );
  } finally {
    await pool.close();
  }
}

const benchPg = await openBenchPg();
try {
  const url = await benchPg.create("server_ingest");
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {});
  // Fan-out 3, as in the bench; paused, so no worker is needed and the deliveries stay (held, not dropped).
  await createSubs(
    db,
    ["sub_lincoln_sis", "sub_lincoln_lms", "sub_analytics"].map((id, i) => ({ id, url: `https://${id}.example.test/hooks`, tenant: i < 2 ? "lincoln" : null })),
  );
  await db.query("UPDATE subscriptions SET state = 'paused'");
  const prisma = createPrisma(url);
  const { token } = await createApiToken(prisma, { role: "producer", name: "bench-server-ingest" });
  await prisma.$disconnect();
  const port = await freePort();
  const server = startChild(["bin/run-ts.mjs", "server.ts", "-p", String(port), "-H", "127.0.0.1"], {
    name: "server.ts",
    env: { DATABASE_URL: url, HOOKLEDGER_SAMPLER: "0", NEXT_TELEMETRY_DISABLED: "1" },
    nodeArgs: nodeFlags,
  });
  try {
    await server.waitFor(/listening on/, 90_000);
    const run = single ? singles : batches;
    await run(port, token, "warm_", 4_000);
    console.log(
      `server.ts, ${single ? "single publishes, 32 in flight" : `batches of 500, 4 in flight${gzip ? ", gzip answers" : ""}`}, node flags [${nodeFlags.join(" ")}]`,
    );
    for (let r = 1; r <= rounds; r++) {
      const meter = cpuMeter({ server: [server.pid], bench: [process.pid] }, benchPg.postmasterPid());
      const t0 = performance.now();
      await run(port, token, `r${r}_`, events);
      const rate = events / ((performance.now() - t0) / 1000);
      const { coresUsed: c, machineCoresBusy } = meter();
      const us = (cores: number) => ((cores / rate) * 1e6).toFixed(0);
      console.log(
        `round ${r}: ${rate.toFixed(0)} events/s; CPU per event: server ${us(c.server)} µs, load generator ${us(c.bench)} µs, Postgres ${us(c.postgres)} µs; ${machineCoresBusy} of 2 cores busy`,
      );
    }
  } finally {
    await server.stop(5000);
    await db.end();
  }
} finally {
  await benchPg.close();
}
