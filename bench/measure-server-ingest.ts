// Publishes through server.ts (what `hookledger start` runs) round after round,
// each on the same fresh server, and says where each event's CPU went: the
// server, this load generator and Postgres. Narrower and quicker than
// `npm run bench -- --only ingest` (which also measures the bare route and
// next start, and the single publishes before the batches): the way to compare one
// change to the publish path, run against a worktree of the commit before.
//   node bin/run-ts.mjs bench/measure-server-ingest.ts [--rounds K] [--events N] [--single] [--gzip] [--status-only] [--concurrency C] [--compare-answers] [--b-env "K=V …"] [--b-sql "…"] [--bare] [--node-flags "…"] [--sql "…"]
//   --single      one event per request, 32 in flight (default: batches of 500 through the typed client, 4 in flight)
//   --gzip        the batches ask for a gzip answer, as fetch does unless told otherwise (the client asks for none)
//   --status-only the batches ask for answers without deliveries (?deliveries=false), as hookledger publish --file does
//   --concurrency batches in flight (default 4)
//   --compare-answers each round twice on the same server, with deliveries then status only: the two side by side
//   --b-env "K=V …"   a second server, on a ledger of its own, with these variables added to its environment
//                 (a switch read at start-up, say); the rounds alternate between the two, so both see the same
//                 minutes of a noisy machine
//   --b-sql "…"   the second server's ledger gets this SQL too (a database setting, say); implies the second server
//   --bare        the same route handlers in a plain node:http server (bench/bare-ingest-server.ts) instead of
//                 server.ts: what having Next in the process costs the publish path
//   --node-flags  the server's node flags instead of lib/server/node-flags.ts's (an empty string for none)
//   --sql "…"     run this on the scratch database before the load: a what-if (drop an index, say)
// Needs a build (`npm run build`): server.ts hands every other path to Next.
import { randomBytes } from "node:crypto";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.LOG_LEVEL ??= "warn";
const { openBenchPg } = await import("./lib/pg");
const { startChild } = await import("./lib/proc");
const { cpuMeter } = await import("./lib/cpu");
const { argOf: arg } = await import("./lib/variants");
const { freePort } = await import("../lib/db/embedded");
const { freshLedger, load, loadBatches } = await import("./scenarios/ingest");
const { SERVER_NODE_FLAGS } = await import("../lib/server/node-flags");

const rounds = Number(arg("--rounds", "3"));
const events = Number(arg("--events", "60000"));
const single = process.argv.includes("--single");
const gzip = process.argv.includes("--gzip");
const bare = process.argv.includes("--bare");
const statusOnly = process.argv.includes("--status-only");
const compareAnswers = process.argv.includes("--compare-answers");
const nodeFlags = process.argv.includes("--node-flags") ? arg("--node-flags", "").split(" ").filter(Boolean) : SERVER_NODE_FLAGS;

/** The load of `npm run bench -- --only ingest` (bench/scenarios/ingest.ts), checked: every event created. */
async function run(port: number, token: string, prefix: string, n: number, answersStatusOnly = statusOnly) {
  const bound = { token, events: n, prefix, maxSeconds: 3600 };
  if (single) {
    const r = await load(port, { ...bound, path: "/api/v1/events", concurrency: 32 });
    if (r.statuses[202] !== n) throw new Error(`not every publish was created: ${JSON.stringify(r.statuses)}`);
    return;
  }
  const withGzip: typeof fetch = (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), "accept-encoding": "gzip, deflate" } });
  const r = await loadBatches(port, {
    ...bound,
    batchSize: 500,
    concurrency: Number(arg("--concurrency", "4")),
    deliveries: !answersStatusOnly,
    ...(gzip ? { fetch: withGzip } : {}),
  });
  if (r.created !== n) throw new Error(`not every event was created: ${JSON.stringify(r)}`);
}

const benchPg = await openBenchPg();
const bEnv = process.argv.includes("--b-env")
  ? Object.fromEntries(
      arg("--b-env", "")
        .split(" ")
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    )
  : null;

/**
 * A server on a fresh ledger of its own, the ingest step's (bench/scenarios/ingest.ts: fan-out 3), paused so no
 * worker is needed (held, not dropped).
 */
async function side(name: string, extraEnv: Record<string, string>) {
  const ledger = await freshLedger(benchPg, `server_ingest_${name}`);
  const { db, token } = ledger;
  await db.query("UPDATE subscriptions SET state = 'paused'");
  if (process.argv.includes("--sql")) await db.query(arg("--sql", ""));
  if (name === "b" && process.argv.includes("--b-sql")) await db.query(arg("--b-sql", ""));
  let port = await freePort();
  const env = { ...ledger.env, NEXT_TELEMETRY_DISABLED: "1", ...extraEnv };
  const server = bare
    ? startChild(["bin/run-ts.mjs", "bench/bare-ingest-server.ts"], { name: `bare-ingest-server.ts ${name}`, env, nodeArgs: nodeFlags })
    : startChild(["bin/run-ts.mjs", "server.ts", "-p", String(port), "-H", "127.0.0.1"], { name: `server.ts ${name}`, env, nodeArgs: nodeFlags });
  if (bare) port = Number((await server.waitFor(/^READY (\d+)/, 60_000))[1]);
  else await server.waitFor(/listening on/, 90_000);
  await run(port, token, "warm_", 4_000);
  return { name, port, token, server, close: ledger.close };
}

const sides: Awaited<ReturnType<typeof side>>[] = [];
try {
  sides.push(await side("a", {}));
  if (bEnv || process.argv.includes("--b-sql")) sides.push(await side("b", bEnv ?? {}));
  console.log(
    `${bare ? "the routes in node:http" : "server.ts"}, ${single ? "single publishes, 32 in flight" : `batches of 500, ${arg("--concurrency", "4")} in flight${gzip ? ", gzip answers" : ""}${statusOnly ? ", status-only answers" : ""}`}, node flags [${nodeFlags.join(" ")}]${bEnv ? `; b: ${JSON.stringify(bEnv)}` : ""}`,
  );
  for (let r = 1; r <= rounds; r++) {
    for (const s of sides) {
      for (const answers of compareAnswers ? [false, true] : [statusOnly]) {
        const meter = cpuMeter({ server: [s.server.pid], bench: [process.pid] }, benchPg.postmasterPid());
        const t0 = performance.now();
        await run(s.port, s.token, `r${r}${answers ? "s" : ""}_`, events, answers);
        const rate = events / ((performance.now() - t0) / 1000);
        const { coresUsed: c, machineCoresBusy } = meter();
        const us = (cores: number) => ((cores / rate) * 1e6).toFixed(0);
        const label = [sides.length > 1 ? s.name : "", compareAnswers ? (answers ? "status only" : "with deliveries") : ""].filter(Boolean).join(", ");
        console.log(
          `round ${r}${label ? ` (${label})` : ""}: ${rate.toFixed(0)} events/s; CPU per event: server ${us(c.server)} µs, load generator ${us(c.bench)} µs, Postgres ${us(c.postgres)} µs; ${machineCoresBusy} of 2 cores busy`,
        );
      }
    }
  }
} finally {
  for (const s of sides) {
    await s.server.stop(5000);
    await s.close();
  }
  await benchPg.close();
}
