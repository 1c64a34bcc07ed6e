// EXPLAIN (ANALYZE, BUFFERS) of the worker's hot-path statements (lib/ledger/sql/)
// on a fresh 40,000-row backlog over 20 subscriptions, each inside a rolled-back
// transaction. The SQL is captured from the real functions, not copied.
//   node bin/run-ts.mjs bench/explain-hot-path.ts [--skew] [--full-plans]
//   --skew            10,000 older due rows on one subscription first (the fairness scenario's shape)
//   --subs N          the backlog over N subscriptions instead of 20
import { randomBytes } from "node:crypto";
import pg from "pg";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
const { openBenchPg } = await import("./lib/pg");
const { createSubs, seedDeliveries } = await import("./lib/seed");
const { claimDeliveries } = await import("../lib/ledger/sql/claim");
const { writeResults } = await import("../lib/ledger/sql/write-results");

const flag = (f: string) => process.argv.includes(f);
const benchPg = await openBenchPg({});
try {
  const url = await benchPg.create("explain");
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {});
  const i = process.argv.indexOf("--subs");
  const n = i >= 0 ? Number(process.argv[i + 1]) : 20;
  const subs = Array.from({ length: n }, (_, i) => `sub_${String(i + 1).padStart(String(n).length, "0")}`);
  await createSubs(
    db,
    subs.map((id) => ({ id, url: "http://127.0.0.1:9/ok", tenant: id })),
  );
  if (flag("--skew")) await seedDeliveries(db, { prefix: "old_", count: 10_000, subs: [subs[0]] });
  await seedDeliveries(db, { prefix: "evt_", count: 40_000, subs });
  await db.query("VACUUM ANALYZE");

  let captured: { q: string; p: unknown[] } = { q: "", p: [] };
  // The functions call query(text, values) or query({ text, values }).
  const capture = {
    query: async (q: string | { text: string; values: unknown[] }, p?: unknown[]) => (
      (captured = typeof q === "string" ? { q, p: p ?? [] } : { q: q.text, p: q.values }),
      { rows: [] }
    ),
  } as unknown as pg.Pool;
  const c = await db.connect();
  c.on("error", () => {});
  const explain = async (label: string) => {
    await c.query("BEGIN");
    const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${captured.q}`, captured.p);
    await c.query("ROLLBACK");
    const plan = rows.map((r) => r["QUERY PLAN"] as string);
    console.log(`\n== ${label}: ${plan.find((l) => l.startsWith("Execution Time"))}`);
    if (flag("--full-plans")) console.log(plan.join("\n"));
    else
      for (const [i, l] of plan.entries())
        if (
          /Index Scan using deliveries_(sub_)?due|Rows Removed by Filter|^Trigger|Insert on attempts|Update on deliveries/.test(l.trim()) ||
          /^\s*->  Update|^Update/.test(l)
        )
          console.log(`${String(i).padStart(3)} ${l}`);
  };
  const claimOpts = { owner: "w1", limit: 200, perSubscription: 100, leaseSlackSeconds: 30, excludeSubscriptions: [] as string[] };
  for (let i = 1; i <= 3; i++) {
    await claimDeliveries(capture, claimOpts);
    await explain(`claimDeliveries, 200 rows (run ${i})`);
  }
  const claimed = await claimDeliveries(db, claimOpts);
  const now = new Date();
  await writeResults(
    capture,
    "w1",
    claimed.map((r) => ({
      id: r.id,
      eventAt: r.eventAt,
      claimToken: r.claimToken,
      state: "delivered" as const,
      nextAttemptAt: null,
      statusCode: 204,
      errorClass: null,
      errorMessage: null,
      deadLetterReason: null,
      startedAt: now,
      durationMs: 3,
      retryAfterSeconds: null,
      responseHeaders: { date: now.toUTCString(), "keep-alive": "timeout=60" },
      responseExcerpt: null,
      ambiguous: false,
      trigger: "scheduled",
      actor: null,
    })),
  );
  await explain(`writeResults, ${claimed.length} rows`);
  c.release();
  await db.end();
} finally {
  await benchPg.close();
}
process.exit(0);
