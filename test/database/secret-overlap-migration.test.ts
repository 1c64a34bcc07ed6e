// Migration 0049 on a database that already holds signing secrets (current
// ones, overlaps ended long ago, overlaps ending today): every secret is kept,
// and the notifier's look for overlaps ending within the day then reads them
// through the new index.
import { afterAll, expect, it } from "vitest";
import { asBefore, databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;

afterAll(async () => {
  await mdb?.close();
});

it("migration 0049_secret_overlap_ending keeps every secret, and overlaps ending soon are read through subscription_secrets_expiring", async () => {
  mdb = await databaseBefore("0049");
  const c = mdb.client;
  await c.query(
    `INSERT INTO subscriptions (id, name, url, event_types)
     SELECT 'sub_' || g, 'S' || g, 'https://h' || g || '.example.test/in', '{assignment.graded}' FROM generate_series(1, 2000) g`,
  );
  await c.query(
    `INSERT INTO subscription_secrets (id, subscription_id, secret, expires_at)
     SELECT 'sec_' || g, 'sub_' || g, 'sealed', NULL FROM generate_series(1, 2000) g
     UNION ALL SELECT 'sec_old_' || g, 'sub_' || g, 'sealed', now() - interval '30 days' FROM generate_series(1, 2000, 10) g
     UNION ALL SELECT 'sec_ending_' || g, 'sub_' || g, 'sealed', now() + make_interval(hours => g) FROM generate_series(1, 3) g`,
  );
  const snapshot = () => tableRows(c, "subscription_secrets", ["id"]);
  const before = await snapshot();
  expect(before).toHaveLength(2203);

  expect(await mdb.applyRest()).toContain(mdb.rest[0]);
  expect(asBefore(before, await snapshot())).toEqual(before);

  await c.query("ANALYZE subscription_secrets");
  const plan = (await c.query(`EXPLAIN SELECT id FROM subscription_secrets WHERE expires_at > now() AND expires_at <= now() + interval '24 hours'`)).rows
    .map((r) => r["QUERY PLAN"])
    .join("\n");
  expect(plan, plan).toMatch(/Index (Only )?Scan using subscription_secrets_expiring|Bitmap Index Scan on subscription_secrets_expiring/);
  expect(plan).not.toMatch(/Seq Scan/);
});
