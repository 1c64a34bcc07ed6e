// What the Dead letters page's poll (GET /api/v1/dlq?limit=50, every 5 s) and
// its subscription picker (GET /api/v1/dlq?limit=8&q=…, per keystroke) cost
// when many subscriptions hold dead letters: a fresh ledger of --subs
// subscriptions, 25 to a district, --dead of them with three dead letters each
// (two reasons, dead-lettered over the last month) and a fresh DLQ sample. The
// median wall time of getDlqSummary for an operator's page, the picker, and a
// district's page (one with dead letters), and the buffers each call touched
// (pg_stat_statements); with --plans, EXPLAIN (ANALYZE, BUFFERS) of every
// statement of each call (captured from the real call).
//   node bin/run-ts.mjs bench/dlq-summary.ts [--subs 10000] [--dead 4000] [--calls 30] [--plans]
import { randomBytes } from "node:crypto";
import pg from "pg";
import { numberArg } from "./lib/args";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
const { openBenchPg } = await import("./lib/pg");
const { getDlqSummary } = await import("../lib/dashboard/dead-letters");
const { sampleDlq } = await import("../lib/rollups/sampler");

const SUBS = numberArg("--subs", 10_000);
const DEAD = numberArg("--dead", 4_000);
const CALLS = numberArg("--calls", 30);
const plans = process.argv.includes("--plans");

const benchPg = await openBenchPg({});
try {
  const url = await benchPg.create("dlqsum");
  const db = new pg.Pool({ connectionString: url, max: 4 });
  db.on("error", () => {});
  await db.query(`INSERT INTO tenants (id, name) SELECT 'tnt_' || lpad(t::text, 4, '0'), 'District ' || t FROM generate_series(1, ceil($1::int / 25.0)::int) t`, [SUBS]);
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_' || lpad(i::text, 6, '0'), 'School ' || i, 'tnt_' || lpad((1 + (i - 1) / 25)::text, 4, '0'), 'https://s' || i || '.example.test/hooks', '{assignment.graded}'
       FROM generate_series(1, $1::int) i`,
    [SUBS],
  );
  // Three dead letters for each of the first DEAD subscriptions in a spread (every SUBS/DEAD-th), over the last month.
  await db.query(
    `INSERT INTO events (id, type, payload, occurred_at, created_at)
     SELECT 'evt_' || i || '_' || k, 'assignment.graded', '\\x7b7d'::bytea, now() - make_interval(hours => (i * 7 + k * 5) % 700), now() - make_interval(hours => (i * 7 + k * 5) % 700)
       FROM generate_series(1, $1::int) i, generate_series(1, 3) k`,
    [DEAD],
  );
  await db.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                             dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, event_at, created_at)
     SELECT hl_delivery_key(x.sub, k.id), k.id, x.sub, 'assignment.graded', 'dead_letter', 6, 6,
            CASE WHEN kk = 3 THEN 'permanent' ELSE 'exhausted' END, k.created_at + interval '1 hour',
            CASE WHEN kk = 3 THEN 'http_4xx' ELSE 'http_5xx' END, CASE WHEN kk = 3 THEN 422 ELSE 503 END, k.created_at, k.created_at
       FROM generate_series(1, $1::int) i CROSS JOIN generate_series(1, 3) kk
       CROSS JOIN LATERAL (SELECT 'sub_' || lpad((1 + (i - 1) * $2::int / $1::int)::text, 6, '0') AS sub) x
       JOIN event_keys k ON k.id = 'evt_' || i || '_' || kk`,
    [DEAD, SUBS],
  );
  await db.query("SELECT hl_fold_delivery_state_counts()");
  await db.query("VACUUM ANALYZE");
  await sampleDlq(db, { minGapMs: 0 });
  const district = (await db.query("SELECT tenant FROM subscriptions WHERE id = 'sub_' || lpad((1 + 10 * $1::int / $2::int)::text, 6, '0')", [SUBS, DEAD])).rows[0]
    .tenant;

  const cases: Record<string, () => Promise<unknown>> = {
    "page (limit 50)": () => getDlqSummary({ subscriptionLimit: 50 }, db),
    "picker (limit 8, q=School 12)": () => getDlqSummary({ subscriptionLimit: 8, q: "School 12" }, db),
    [`district page (${district}, limit 50)`]: () => getDlqSummary({ subscriptionLimit: 50, scope: { tenantId: district } }, db),
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${SUBS.toLocaleString()} subscriptions, ${DEAD.toLocaleString()} with 3 dead letters each`);
  for (const [name, run] of Object.entries(cases)) {
    for (let i = 0; i < 3; i++) await run();
    if (benchPg.statStatements) await db.query("SELECT pg_stat_statements_reset()");
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      await run();
      times.push(performance.now() - t);
    }
    const b = benchPg.statStatements
      ? Number(
          (
            await db.query(
              `SELECT sum(shared_blks_hit + shared_blks_read)::bigint AS b FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel AND query NOT LIKE '%pg_stat_statements%'`,
            )
          ).rows[0].b,
        ) / CALLS
      : null;
    console.log(`${name}: median ${median(times).toFixed(1)} ms, ${b === null ? "?" : Math.round(b)} buffers a call`);
    if (plans) {
      const seen: { text: string; values: unknown[] }[] = [];
      const capturing = { query: (text: string, values: unknown[]) => (seen.push({ text, values }), db.query(text, values)) } as unknown as pg.Pool;
      await getDlqSummary(
        name.startsWith("page")
          ? { subscriptionLimit: 50 }
          : name.startsWith("picker")
            ? { subscriptionLimit: 8, q: "School 12" }
            : { subscriptionLimit: 50, scope: { tenantId: district } },
        capturing,
      );
      for (const q of seen) {
        const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${q.text}`, q.values);
        console.log(`--- ${q.text.replace(/\s+/g, " ").slice(0, 160)}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
      }
    }
  }
  await db.end();
  await benchPg.drop(url);
} finally {
  await benchPg.close();
}
