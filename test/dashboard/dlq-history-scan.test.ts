// A district's DLQ chart (GET /api/v1/dlq/history, every 5 s on its Dead
// letters page) reads its own subscriptions' sample groups of the chart's
// hours, neither every group of every sample nor its groups of the whole
// retention: counted as the rows the statement's plan reads from
// dlq_sample_groups, over 60 samples each holding a group of 1,000 other
// districts' subscriptions beside the district's two, after a day of the
// district's own. Its values stay the sums
// of its own groups, a sample where it had none counting 0.
import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { findDlqHistoryRows } from "../../lib/ledger/sql/dead-letters";
import { rowsRead, type PlanNode } from "../helpers/plan-rows";

let db: TestDb;
const SAMPLES = 60;
const base = new Date(Math.floor(Date.now() / 15_000) * 15_000 - SAMPLES * 15_000);
const at = (i: number) => new Date(base.getTime() + i * 15_000);

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`INSERT INTO tenants (id, name) SELECT 'tnt_' || t, 'District ' || t FROM generate_series(0, 100) t`);
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_' || g, 'S' || g, 'tnt_' || (1 + g % 100), 'https://h' || g || '.example.test/in', '{assignment.graded}'::text[] FROM generate_series(1, 1000) g
     UNION ALL SELECT 'sub_a' || g, 'A' || g, 'tnt_0', 'https://a' || g || '.example.test/in', '{assignment.graded}'::text[] FROM generate_series(1, 2) g`,
  );
  await db.pool.query(
    `INSERT INTO dlq_samples (sampled_at, depth, oldest_at) SELECT $1::timestamptz + make_interval(secs => i * 15), 5000, $1::timestamptz - interval '3 days'
       FROM generate_series(0, ${SAMPLES - 1}) i`,
    [base],
  );
  // Every other district's subscription has five dead letters three days old at every sample. The district's first
  // subscription has i + 1 in two samples of three (two reasons), its second 2 in every other sample: where neither
  // has any (i % 6 = 3) the district's chart is 0.
  await db.pool.query(
    `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
     SELECT s.sampled_at, 'sub_' || g, 'exhausted', 'http_5xx', 503, 5, s.sampled_at - interval '3 days'
       FROM dlq_samples s, generate_series(1, 1000) g
     UNION ALL
     SELECT $1::timestamptz + make_interval(secs => i * 15), 'sub_a1', r.reason, NULL, r.status, CASE r.reason WHEN 'gone' THEN 1 ELSE i END,
            $1::timestamptz + make_interval(secs => i * 15 - 100 - i - r.extra)
       FROM generate_series(0, ${SAMPLES - 1}) i, (VALUES ('gone', 410, 50), ('exhausted', 503, 0)) r(reason, status, extra) WHERE i % 3 <> 0
     UNION ALL
     SELECT $1::timestamptz + make_interval(secs => i * 15), 'sub_a2', 'exhausted', NULL, 503, 2, $1::timestamptz - interval '1 hour'
       FROM generate_series(0, ${SAMPLES - 1}) i WHERE i % 2 = 0`,
    [base],
  );
  // The day before the chart's hour: the district's groups of 1,440 earlier samples (kept for a week), none of which it reads.
  await db.pool.query(
    `WITH s AS (INSERT INTO dlq_samples (sampled_at, depth, oldest_at)
                SELECT $1::timestamptz - make_interval(mins => i), 7, $1::timestamptz - interval '2 days' FROM generate_series(1, 1440) i RETURNING sampled_at)
     INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
     SELECT s.sampled_at, 'sub_a' || g, 'exhausted', NULL, 503, 7, $1::timestamptz - interval '2 days' FROM s, generate_series(1, 2) g`,
    [base],
  );
  await db.pool.query("ANALYZE");
});

afterAll(async () => {
  await db?.close();
});

/** What the district's chart must say at sample i (one sample a bucket). */
function expected(i: number) {
  const s = at(i).getTime();
  let depth = 0;
  let oldest: number | null = null;
  const seen = (d: number, o: number) => ((depth += d), (oldest = oldest === null ? o : Math.min(oldest, o)));
  if (i % 3 !== 0) seen(1 + i, s - (100 + i + 50) * 1000);
  if (i % 2 === 0) seen(2, base.getTime() - 3600_000);
  return { at: at(i).toISOString(), depth, oldestAgeSeconds: oldest === null ? null : (s - oldest) / 1000 };
}

it("draws a district's chart from its own subscriptions' groups, not every district's", async () => {
  const c = await db.pool.connect();
  try {
    let seen: { text: string; values: unknown[] } | undefined;
    const capturing = { query: (text: string, values: unknown[]) => ((seen = { text, values }), c.query(text, values)) } as unknown as pg.PoolClient;
    const rows = await findDlqHistoryRows(capturing, at(0), at(SAMPLES - 1), 15, { tenantId: "tnt_0" });
    expect(rows.map((r) => ({ at: r.at.toISOString(), depth: r.depth, oldestAgeSeconds: r.oldestAgeSeconds }))).toEqual(
      Array.from({ length: SAMPLES }, (_, i) => expected(i)),
    );
    expect(rows.filter((r) => r.depth === 0)).toHaveLength(10);

    const { rows: plans } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${seen!.text}`, seen!.values);
    const plan = plans[0]["QUERY PLAN"][0].Plan as PlanNode;
    // Its own groups: 40 + 40 of the first subscription's (two reasons) and 30 of the second's, not 60 × 1,002.
    expect(rowsRead(plan, "dlq_sample_groups"), JSON.stringify(plan, null, 1)).toBeLessThanOrEqual(SAMPLES * 2 * 2);
  } finally {
    c.release();
  }
});

it("a portal scope of one subscription charts that subscription's groups only", async () => {
  const rows = await findDlqHistoryRows(db.pool, at(0), at(SAMPLES - 1), 15, { tenantId: "tnt_0", subscriptionId: "sub_a2" });
  expect(rows.map((r) => r.depth)).toEqual(Array.from({ length: SAMPLES }, (_, i) => (i % 2 === 0 ? 2 : 0)));
  expect(rows[0].oldestAgeSeconds).toBe(3600);
  expect(rows[1].oldestAgeSeconds).toBeNull();
});

it("an operator's chart is the samples' own totals", async () => {
  const rows = await findDlqHistoryRows(db.pool, at(0), at(SAMPLES - 1), 15);
  expect(rows).toHaveLength(SAMPLES);
  expect(rows.every((r) => r.depth === 5000 && r.oldestAgeSeconds! >= 3 * 86400)).toBe(true);
});
