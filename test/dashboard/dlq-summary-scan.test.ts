// The Dead letters page's poll (GET /api/v1/dlq?limit=50, every 5 s) and its
// subscription picker (?limit=8&q=…, per keystroke) read the dead letters of
// the subscriptions they list, not of every subscription with dead letters:
// counted as the rows the plans of every statement of one call read from the
// deliveries partitions, among 1,000 subscriptions with three dead letters
// each. What they answer is the matching part of the whole summary (no limit,
// which lists and reads every subscription): the same totals, oldest ages and
// reasons, and the same listed subscriptions, pairs and groups.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { getDlqSummary, type DlqSummary } from "../../lib/dashboard/dead-letters";
import type { Scope } from "../../lib/tenants/scope";
import { rowsRead, type PlanNode } from "../helpers/plan-rows";

let db: TestDb;
const SUBS = 1000;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`INSERT INTO tenants (id, name) SELECT 'tnt_' || lpad(t::text, 3, '0'), 'District ' || t FROM generate_series(1, ${SUBS / 10}) t`);
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_' || lpad(i::text, 4, '0'), 'School ' || i, 'tnt_' || lpad((1 + (i - 1) / 10)::text, 3, '0'), 'https://s' || i || '.example.test/hooks',
            '{assignment.graded}'::text[]
       FROM generate_series(1, ${SUBS}) i`,
  );
  // Three dead letters a subscription, two reasons (a few without one), over the last two days; sub_0500 has 40, and
  // the oldest 'gone' one, so the deepest and the oldest are not the same subscription.
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at, created_at)
     SELECT 'evt_' || i || '_' || k, 'assignment.graded', '\\x7b7d'::bytea, t, t
       FROM generate_series(1, ${SUBS}) i, generate_series(1, CASE WHEN i = 500 THEN 40 ELSE 3 END) k,
            LATERAL (SELECT now() - make_interval(mins => (i * 37 + k * 101) % 2880 + 5) AS t) x`,
  );
  await db.pool.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                             dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, event_at, created_at)
     SELECT hl_delivery_key(x.sub, e.id), e.id, x.sub, 'assignment.graded', 'dead_letter', 6, 6,
            CASE WHEN i = 777 AND k = 1 THEN 'gone' WHEN i % 97 = 0 AND k = 2 THEN NULL WHEN k = 3 THEN 'permanent' ELSE 'exhausted' END,
            CASE WHEN i = 777 AND k = 1 THEN now() - interval '5 days' ELSE e.created_at + interval '1 minute' END,
            CASE WHEN k = 3 THEN 'http_4xx' ELSE 'http_5xx' END, CASE WHEN k = 3 THEN 422 ELSE 503 END, e.created_at, e.created_at
       FROM generate_series(1, ${SUBS}) i, generate_series(1, 40) k,
            LATERAL (SELECT 'sub_' || lpad(i::text, 4, '0') AS sub, 'evt_' || i || '_' || k AS id) x
       JOIN events e ON e.id = x.id`,
  );
  await db.pool.query("ANALYZE");
});

afterAll(async () => {
  await db?.close();
});

/** The call's answer, and the dead-letter rows all its statements read (each EXPLAIN ANALYZEd as it ran). */
async function measured(opts: Parameters<typeof getDlqSummary>[0]): Promise<{ summary: DlqSummary; rowsRead: number }> {
  const c = await db.pool.connect();
  try {
    const seen: { text: string; values: unknown[] }[] = [];
    const capturing = { query: (text: string, values: unknown[]) => (seen.push({ text, values }), c.query(text, values)) } as unknown as pg.PoolClient;
    const summary = await getDlqSummary(opts, capturing);
    // The plans are read with sequential scans off: this ledger's 3,000 dead letters fit in one small partition, which
    // PostgreSQL 15 reads whole rather than through an index (18 takes the index), whatever a statement asks for. What
    // is counted is then what each statement's own conditions let it read, which is what grows on a large ledger.
    await c.query("SET enable_seqscan = off");
    let read = 0;
    for (const q of seen) {
      const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values);
      read += rowsRead(rows[0]["QUERY PLAN"][0].Plan as PlanNode, (r) => r.startsWith("deliveries"));
    }
    return { summary, rowsRead: read };
  } finally {
    await c.query("RESET enable_seqscan");
    c.release();
  }
}

/** What a listed answer must say: the whole summary's totals, and its listing narrowed to `listed`. */
function narrowed(all: DlqSummary, listed: string[], matching: number): DlqSummary {
  const keep = new Set(listed);
  const bySub = <T extends { subscriptionId: string }>(rs: T[]) => rs.filter((r) => keep.has(r.subscriptionId));
  return {
    ...all,
    bySubscription: bySub(all.bySubscription),
    bySubscriptionAndReason: bySub(all.bySubscriptionAndReason),
    groups: bySub(all.groups),
    matchingSubscriptionCount: matching,
  };
}
const sorted = (s: DlqSummary) => ({
  ...s,
  bySubscriptionAndReason: [...s.bySubscriptionAndReason].sort((a, b) => (a.subscriptionId + a.reason).localeCompare(b.subscriptionId + b.reason)),
  groups: [...s.groups].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  byReason: [...s.byReason].sort((a, b) => String(a.reason).localeCompare(String(b.reason))),
});

describe("the DLQ summary reads the dead letters of what it lists", () => {
  const now = new Date();
  const cases: { name: string; opts: { q?: string; subscriptionLimit: number; include?: string; scope?: Scope }; bound: number }[] = [
    { name: "the page's poll (the deepest 50)", opts: { subscriptionLimit: 50 }, bound: 400 },
    { name: "the picker (8 whose name contains 'School 12')", opts: { q: "school 12", subscriptionLimit: 8 }, bound: 200 },
    { name: "the page with a chosen subscription beyond the deepest 50", opts: { subscriptionLimit: 50, include: "sub_0999" }, bound: 400 },
    { name: "a district's page (the deepest 5 of its 10)", opts: { subscriptionLimit: 5, scope: { tenantId: "tnt_050" } }, bound: 200 },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const whole = await measured({ now, scope: c.opts.scope, q: c.opts.q });
      const { summary, rowsRead } = await measured({ now, ...c.opts });
      expect(rowsRead).toBeLessThanOrEqual(c.bound);
      expect(summary.bySubscription.length).toBeGreaterThan(0);
      const listed = summary.bySubscription.map((r) => r.subscriptionId);
      // The deepest first, as the whole summary ranks them (ties by id).
      const ranked = [...whole.summary.bySubscription].sort((a, b) => b.depth - a.depth || a.subscriptionId.localeCompare(b.subscriptionId)).map((r) => r.subscriptionId);
      const expectedListed = ranked.slice(0, c.opts.subscriptionLimit);
      if (c.opts.include) expectedListed.push(c.opts.include);
      expect(new Set(listed)).toEqual(new Set(expectedListed));
      expect(sorted(summary)).toEqual(sorted(narrowed(whole.summary, listed, whole.summary.matchingSubscriptionCount)));
      if (!c.opts.scope && !c.opts.q) expect(whole.rowsRead).toBeGreaterThan(3000);
    });

  it("says the oldest is the 'gone' dead letter five days old, though its subscription is not listed", async () => {
    const { summary } = await measured({ now, subscriptionLimit: 8 });
    expect(summary.bySubscription.map((r) => r.subscriptionId)).not.toContain("sub_0777");
    expect(summary.oldestAgeSeconds).toBeGreaterThanOrEqual(5 * 86400 - 5);
    expect(summary.byReason.find((r) => r.reason === "gone")).toMatchObject({ depth: 1 });
    expect(summary.byReason.find((r) => r.reason === null)?.depth).toBe(10);
    expect(summary.depth).toBe(999 * 3 + 40);
  });
});
