// The dashboard10m measurements on a ledger seeded before and kept
// (BENCH_KEEP_DB=1, bench/scenarios/dashboard.ts), so a change is measured
// without seeding 10 M deliveries again:
//
//   --queries   the dashboard's queries (bench/scenarios/dashboard.ts,
//               measureDashboardQueries); changes nothing, so the kept
//               ledger itself may be used.
//   otherwise   the lifecycle: an erasure, then a retention run with its
//               result-write probe (bench/scenarios/scale-lifecycle.ts). It
//               removes what it measures: run it on a copy,
//               CREATE DATABASE try1 TEMPLATE hl_kept_dashboard10m STRATEGY FILE_COPY.
//
//   node bin/run-ts.mjs bench/lifecycle.ts <database url> [--queries] [--retention-seconds S] [--span-days D]
//
// The database is migrated first (the time that takes is printed), so a
// migration added since the seed is measured on the full ledger too.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { migrate } from "../lib/db/migrate";
import { createPrisma } from "../lib/db/prisma";
import { runScaleLifecycle } from "./scenarios/scale-lifecycle";
import { measureDashboardQueries } from "./scenarios/dashboard";
import { rollupAttemptStats, sampleDlq } from "../lib/rollups/sampler";

const args = process.argv.slice(2);
const url = args.find((a) => !a.startsWith("--") && !/^\d+$/.test(a));
const num = (flag: string, d: number) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : d);
if (!url) {
  console.error("usage: bench/lifecycle.ts <database url> [--queries] [--retention-seconds S] [--span-days D]");
  process.exit(2);
}
const log = (m: string) => console.log(`[lifecycle ${new Date().toISOString().slice(11, 19)}] ${m}`);
const t0 = performance.now();
await migrate(url);
log(`migrated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const prisma = createPrisma(url);
try {
  if (args.includes("--queries")) {
    const db = new pg.Pool({ connectionString: url, max: 6, statement_timeout: 10_000 });
    db.on("error", () => {});
    try {
      const statStatements = await db.query("SELECT count(*) FROM pg_stat_statements").then(
        () => true,
        () => false,
      );
      // What the worker's sampler keeps fresh while it runs (the DLQ summary reads the latest sample when it is
      // under a minute old, and counts live otherwise): a kept ledger's samples are as old as its seed.
      await rollupAttemptStats(db, { settleSeconds: 0 });
      await sampleDlq(db, { minGapMs: 0 });
      console.log(JSON.stringify(await measureDashboardQueries(db, prisma, 100, statStatements, log), null, 2));
    } finally {
      await db.end();
    }
  } else {
    const out = await runScaleLifecycle(url, prisma, { spanDays: num("--span-days", 182), retentionSeconds: num("--retention-seconds", 600) }, log);
    console.log(JSON.stringify(out, null, 2));
  }
} finally {
  await prisma.$disconnect();
}
process.exit(0);
