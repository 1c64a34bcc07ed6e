// The drain without HTTP: the real DeliveryWorker (claim loop, result group
// commit, lib/ledger/sql/write-and-claim.ts) in this process, its sender replaced by one that
// answers 204 after `--answer-ms`, on the drain scenario's backlog. What it
// measures is what Postgres spends per delivery, with nothing else on the
// cores but this process: the way to compare hot-path SQL and schema variants
// quickly (BENCHMARKS.md F1).
//   node bin/run-ts.mjs bench/db-drain.ts [--deliveries N] [--answer-ms MS] [--runs K] [--variant SQL]…
//   --variant "name=SQL"  run once more on a database the SQL was applied to first (repeatable)
//   --subs N   the backlog spread over N subscriptions (default 20)
//   --idle N   N more active subscriptions with nothing queued beside them (default 0): the claim must not pay for them
//   --answer-status S   what the sender answers (default 204); a 4xx other than 408/429 dead-letters each delivery at
//              its first attempt, so the run writes failed attempts instead (the drain then waits for dead letters)
import { randomBytes } from "node:crypto";
import pg from "pg";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.LOG_LEVEL ??= "warn";
const { openBenchPg } = await import("./lib/pg");
const { createSubs, seedDeliveries, countState, pollUntil } = await import("./lib/seed");
const { wakeWorkers } = await import("../lib/ledger/sql/enqueue");
const { cpuMeter } = await import("./lib/cpu");
const { resetStatements, topStatements } = await import("./lib/pgstat");
const { DeliveryWorker } = await import("../worker/worker");

const { argOf: arg, variantsOf, workProxies } = await import("./lib/variants");
const deliveries = Number(arg("--deliveries", "40000"));
const answerMs = Number(arg("--answer-ms", "2"));
const runs = Number(arg("--runs", "2"));
const variants = variantsOf();
const subCount = Number(arg("--subs", "20"));
const idle = Number(arg("--idle", "0"));
const answerStatus = Number(arg("--answer-status", "204"));
const doneState = answerStatus >= 200 && answerStatus < 300 ? "delivered" : "dead_letter";

const benchPg = await openBenchPg({});
try {
  for (let run = 1; run <= runs; run++)
    for (const [name, sql] of variants) {
      const url = await benchPg.create(`dbdrain_${run}_${name}`);
      const db = new pg.Pool({ connectionString: url, max: 2 });
      const subs = Array.from({ length: subCount }, (_, i) => `sub_${String(i + 1).padStart(String(subCount).length, "0")}`);
      await createSubs(
        db,
        subs.map((id) => ({ id, url: "http://127.0.0.1:9/ok", tenant: id, state: "paused" })),
      );
      // Idle subscriptions: active, each its own tenant (so no event fans out to them), nothing queued.
      if (idle > 0)
        await db.query(
          `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, retry_policy, max_concurrency)
           SELECT 'idle_' || lpad(g::text, 6, '0'), 'Idle ' || g, 'idle_' || g, 'http://127.0.0.1:9/idle', '{assignment.graded}', 'active', '{}', 10
           FROM generate_series(1, $1::int) g`,
          [idle],
        );
      await seedDeliveries(db, { prefix: "evt_", count: deliveries, subs, payloadBytes: 1024 });
      if (sql) await db.query(sql);
      await db.query("VACUUM ANALYZE");
      await db.query("CHECKPOINT");
      const worker = new DeliveryWorker({ databaseUrl: url, allowPrivateTargets: true, handleSignals: false });
      (worker.sender as { send: unknown }).send = () =>
        new Promise((resolve) =>
          setTimeout(
            () =>
              resolve({
                outcome: "response",
                statusCode: answerStatus,
                errorClass: null,
                errorMessage: null,
                retryAfter: null,
                durationMs: answerMs,
                responseExcerpt: null,
                responseHeaders: { date: new Date().toUTCString(), connection: "keep-alive", "keep-alive": "timeout=60" },
                ambiguous: false,
              }),
            answerMs,
          ),
        );
      worker.start();
      await new Promise((r) => setTimeout(r, 300));
      await resetStatements(db, benchPg.statStatements);
      await db.query("SELECT pg_stat_reset_shared('wal')");
      const meter = cpuMeter({ self: [process.pid] }, benchPg.postmasterPid());
      const t0 = performance.now();
      await db.query("UPDATE subscriptions SET state = 'active'");
      await wakeWorkers(db); // fixtures do not NOTIFY
      const done = await pollUntil(async () => (await countState(db, doneState)) >= deliveries, 120_000, 50);
      const secs = (performance.now() - t0) / 1000;
      const cpu = meter();
      const top = await topStatements(db, benchPg.statStatements);
      // Deterministic proxies for Postgres's work, immune to the machine's speed: WAL and buffer accesses per delivery.
      const proxies = await workProxies(db, deliveries, "delivery");
      await worker.stop();
      const per = (cores: number) => Math.round(((cores * cpu.wallSeconds) / deliveries) * 1e6);
      console.log(
        `run ${run} ${name.padEnd(24)} ${done ? "" : "INCOMPLETE "}${Math.round(deliveries / secs)}/s  pg ${per(cpu.coresUsed.postgres)} µs/delivery  this process ${per(cpu.coresUsed.self)} µs  ${proxies}  ` +
          (top ?? [])
            .filter((t) => !t.nested)
            .slice(0, 2)
            .map((t) => `${t.query.slice(0, 16)} ${t.calls}× ${t.meanMs} ms`)
            .join(", "),
      );
      await db.end();
      await benchPg.drop(url);
    }
} finally {
  await benchPg.close();
}
process.exit(0);
