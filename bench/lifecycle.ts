// The dashboard10m lifecycle (an erasure, then a retention run with its
// result-write probe: bench/scenarios/scale-lifecycle.ts) on a ledger seeded
// before and kept (BENCH_KEEP_DB=1, bench/scenarios/dashboard.ts), so a
// change to retention is measured without seeding 10 M deliveries again.
// Run it on a copy, since it removes what it measures:
//
//   CREATE DATABASE try1 TEMPLATE hl_kept_dashboard10m;   -- on the kept server
//   node bin/run-ts.mjs bench/lifecycle.ts postgres://…/try1 [retention seconds, default 600] [span days, default 182]
//
// The copy is migrated first (the time that takes is printed), so a migration
// added since the seed is measured on the full ledger too.
import { performance } from "node:perf_hooks";
import { migrate } from "../lib/db/migrate";
import { createPrisma } from "../lib/db/prisma";
import { runScaleLifecycle } from "./scenarios/scale-lifecycle";

const [url, seconds = "600", span = "182"] = process.argv.slice(2);
if (!url) {
  console.error("usage: bench/lifecycle.ts <database url> [retention seconds] [span days]");
  process.exit(2);
}
const log = (m: string) => console.log(`[lifecycle ${new Date().toISOString().slice(11, 19)}] ${m}`);
const t0 = performance.now();
await migrate(url);
log(`migrated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const prisma = createPrisma(url);
try {
  const out = await runScaleLifecycle(url, prisma, { spanDays: Number(span), retentionSeconds: Number(seconds) }, log);
  console.log(JSON.stringify(out, null, 2));
} finally {
  await prisma.$disconnect();
}
process.exit(0);
