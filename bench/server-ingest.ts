// Publishes through server.ts (what `hookledger start` runs) round after round,
// each on the same fresh server, and says where each event's CPU went: the
// server, this load generator and Postgres. Narrower and quicker than
// `npm run bench -- --only ingest` (which also measures the bare route and
// next start, on tables grown by the runs before): the way to compare one
// change to the publish path, run against a worktree of the commit before.
//   node bin/run-ts.mjs bench/server-ingest.ts [--rounds K] [--events N] [--single] [--gzip] [--bare] [--node-flags "…"]
//   --single      one event per request, 32 in flight (default: batches of 500 through the typed client, 4 in flight)
//   --gzip        the batches ask for a gzip answer, as fetch does unless told otherwise (the client asks for none)
//   --bare        the same route handlers in a plain node:http server (bench/ingest-server.ts) instead of
//                 server.ts: what having Next in the process costs the publish path
//   --node-flags  the server's node flags instead of lib/server/node-flags.ts's (an empty string for none)
// Needs a build (`npm run build`): server.ts hands every other path to Next.
import { randomBytes } from "node:crypto";
import pg from "pg";

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
const { load, loadBatches } = await import("./scenarios/ingest");
const { SERVER_NODE_FLAGS } = await import("../lib/server/node-flags");

const rounds = Number(arg("--rounds", "3"));
const events = Number(arg("--events", "60000"));
const single = process.argv.includes("--single");
const gzip = process.argv.includes("--gzip");
const bare = process.argv.includes("--bare");
const nodeFlags = process.argv.includes("--node-flags") ? arg("--node-flags", "").split(" ").filter(Boolean) : SERVER_NODE_FLAGS;

/** The load of `npm run bench -- --only ingest` (bench/scenarios/ingest.ts), checked: every event created. */
async function run(port: number, token: string, prefix: string, n: number) {
  const bound = { token, events: n, prefix, maxSeconds: 3600 };
  if (single) {
    const r = await load(port, { ...bound, path: "/api/v1/events", concurrency: 32 });
    if (r.statuses[202] !== n) throw new Error(`not every publish was created: ${JSON.stringify(r.statuses)}`);
    return;
  }
  const withGzip: typeof fetch = (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), "accept-encoding": "gzip, deflate" } });
  const r = await loadBatches(port, { ...bound, batchSize: 500, concurrency: 4, ...(gzip ? { fetch: withGzip } : {}) });
  if (r.created !== n) throw new Error(`not every event was created: ${JSON.stringify(r)}`);
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
  let port = await freePort();
  const server = bare
    ? startChild(["bin/run-ts.mjs", "bench/ingest-server.ts"], {
        name: "ingest-server.ts",
        env: { DATABASE_URL: url, HOOKLEDGER_SAMPLER: "0" },
        nodeArgs: nodeFlags,
      })
    : startChild(["bin/run-ts.mjs", "server.ts", "-p", String(port), "-H", "127.0.0.1"], {
        name: "server.ts",
        env: { DATABASE_URL: url, HOOKLEDGER_SAMPLER: "0", NEXT_TELEMETRY_DISABLED: "1" },
        nodeArgs: nodeFlags,
      });
  try {
    if (bare) port = Number((await server.waitFor(/^READY (\d+)/, 60_000))[1]);
    else await server.waitFor(/listening on/, 90_000);
    await run(port, token, "warm_", 4_000);
    console.log(
      `${bare ? "the routes in node:http" : "server.ts"}, ${single ? "single publishes, 32 in flight" : `batches of 500, 4 in flight${gzip ? ", gzip answers" : ""}`}, node flags [${nodeFlags.join(" ")}]`,
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
