// The ingest without HTTP: the enqueue statement (hl_enqueue_events through
// lib/ledger/sql/enqueue.ts, as the batch route and the group commit call it)
// from this process, batches of `--batch` events fanned out to 3
// subscriptions, `--concurrency` statements in flight. What it measures is
// what Postgres spends per event: the way to compare ingest SQL and schema
// variants quickly, as bench/db-drain.ts does for the drain.
//   node bin/run-ts.mjs bench/db-ingest.ts [--events N] [--batch B] [--concurrency C] [--runs K] [--variant "name=SQL"]…
//   --variant "name=SQL"  run once more on a database the SQL was applied to first (repeatable)
import { randomBytes } from "node:crypto";
import pg from "pg";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.LOG_LEVEL ??= "warn";
const { openBenchPg } = await import("./lib/pg");
const { createSubs } = await import("./lib/seed");
const { cpuMeter } = await import("./lib/cpu");
const { resetStatements, topStatements } = await import("./lib/pgstat");
const { enqueueEvents } = await import("../lib/ledger/sql/enqueue");
const { eventRow } = await import("../lib/events/publish");

const { argOf: arg, variantsOf, workProxies } = await import("./lib/variants");
const events = Number(arg("--events", "60000"));
const batch = Number(arg("--batch", "500"));
const concurrency = Number(arg("--concurrency", "2"));
const runs = Number(arg("--runs", "2"));
const variants = variantsOf();

/** The bench's usual event (bench/scenarios/ingest.ts), as the route turns it into a row. */
const row = (prefix: string, i: number) =>
  eventRow({
    id: `${prefix}${i}`,
    type: "assignment.graded",
    data: { studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}`, score: i % 100, comment: "Well argued; cite the second source." },
    subject: { tenant: "lincoln", studentId: `stu_${i % 5000}`, assignmentId: `asg_${i % 40}` },
  });

async function load(db: pg.Pool, prefix: string, count: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const from = next;
        next = Math.min(count, next + batch);
        const rows = Array.from({ length: next - from }, (_, k) => row(prefix, from + k));
        await enqueueEvents(db, rows);
      }
    }),
  );
}

const benchPg = await openBenchPg({});
try {
  for (let run = 1; run <= runs; run++)
    for (const [name, sql] of variants) {
      const url = await benchPg.create(`dbingest_${run}_${name}`);
      const db = new pg.Pool({ connectionString: url, max: concurrency });
      await createSubs(
        db,
        ["sub_a", "sub_b", "sub_c"].map((id) => ({ id, url: "http://127.0.0.1:9/ok", tenant: "lincoln", state: "paused" })),
      );
      if (sql) await db.query(sql);
      // Enough rows that the statistics (and so the plans cached in the triggers) are not those of empty tables.
      await load(db, "warm_", Math.max(5_000, 2 * batch * concurrency));
      await db.query("VACUUM ANALYZE");
      await db.query("CHECKPOINT");
      await resetStatements(db, benchPg.statStatements);
      await db.query("SELECT pg_stat_reset_shared('wal')");
      const meter = cpuMeter({ self: [process.pid] }, benchPg.postmasterPid());
      const t0 = performance.now();
      await load(db, "evt_", events);
      const secs = (performance.now() - t0) / 1000;
      const cpu = meter();
      const top = await topStatements(db, benchPg.statStatements);
      const { n } = (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_%'")).rows[0];
      const proxies = await workProxies(db, events, "event");
      const per = (cores: number) => Math.round(((cores * cpu.wallSeconds) / events) * 1e6);
      console.log(
        `run ${run} ${name.padEnd(24)} ${Math.round(events / secs)} events/s (${n} deliveries)  pg ${per(cpu.coresUsed.postgres)} µs/event  this process ${per(cpu.coresUsed.self)} µs  ${proxies}  ` +
          (top ?? [])
            .filter((t) => t.nested)
            .slice(0, 4)
            .map((t) => `${t.query.slice(0, 40)} ${t.calls}× ${t.meanMs} ms`)
            .join(", "),
      );
      await db.end();
      await benchPg.drop(url);
    }
} finally {
  await benchPg.close();
}
process.exit(0);
