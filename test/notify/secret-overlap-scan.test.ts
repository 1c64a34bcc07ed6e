// The notifier's look for signing secrets whose overlap ends within the day
// (endingSecretOverlaps, every 5 s) reads the secrets that expire soon, not
// every secret of every subscription: counted as the rows the statement's plan
// reads from subscription_secrets, among 3,000 subscriptions' secrets (300
// with an overlap that ended a month ago) and three whose overlap ends today.
import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { endingSecretOverlaps } from "../../lib/ledger/sql/notifications";
import { rowsRead, type PlanNode } from "../helpers/plan-rows";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('tnt_a', 'A')`);
  await db.pool.query(`INSERT INTO tenant_contacts (tenant, emails, updated_by) VALUES ('tnt_a', '{it@a.example.test}', 'test')`);
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_' || g, 'S' || g, 'tnt_a', 'https://h' || g || '.example.test/in', '{assignment.graded}' FROM generate_series(1, 3000) g`,
  );
  await db.pool.query(
    `INSERT INTO subscription_secrets (id, subscription_id, secret, expires_at)
     SELECT 'sec_' || g, 'sub_' || g, 'sealed', NULL FROM generate_series(1, 3000) g
     UNION ALL SELECT 'sec_old_' || g, 'sub_' || g, 'sealed', now() - interval '30 days' FROM generate_series(1, 3000, 10) g
     UNION ALL SELECT 'sec_ending_' || g, 'sub_' || g, 'sealed', now() + make_interval(hours => g) FROM generate_series(1, 3) g`,
  );
  await db.pool.query("ANALYZE");
});

afterAll(async () => {
  await db?.close();
});

it("finds the secrets ending within the day reading those, not every subscription's", async () => {
  const c = await db.pool.connect();
  try {
    let seen: { text: string; values: unknown[] } | undefined;
    const capturing = { query: (text: string, values: unknown[]) => ((seen = { text, values }), c.query(text, values)) } as unknown as pg.PoolClient;
    const found = await endingSecretOverlaps(capturing, 24);
    expect(found.map((s) => s.secretId).sort()).toEqual(["sec_ending_1", "sec_ending_2", "sec_ending_3"]);

    const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${seen!.text}`, seen!.values);
    const plan = rows[0]["QUERY PLAN"][0].Plan as PlanNode;
    expect(rowsRead(plan, "subscription_secrets"), JSON.stringify(plan, null, 1)).toBeLessThanOrEqual(10);
  } finally {
    c.release();
  }
});
