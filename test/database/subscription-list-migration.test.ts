// Migration 0038 on a database that already holds subscriptions (tenant-less,
// paused, archived, names in mixed case): every row keeps its values, and the
// list's pages in each order are then read through the new indexes, in the
// order the list's own statement gives them.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { asBefore, databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;
let pool: pg.Pool | undefined;

afterAll(async () => {
  await pool?.end();
  await mdb?.close();
});

describe("migration 0038_subscription_list_orders", () => {
  it("keeps every subscription, and pages in each order read an index in that order", async () => {
    mdb = await databaseBefore("0038");
    pool = new pg.Pool({ connectionString: mdb.url, max: 2 });
    await pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, state_reason, created_at, archived_at, archive_reason, archived_by)
       SELECT 'sub_' || lpad(g::text, 4, '0'), CASE WHEN g % 2 = 0 THEN 'District ' ELSE 'district ' END || (g % 13),
              CASE WHEN g % 9 = 0 THEN NULL ELSE 'tenant_' || (g % 5) END, 'https://h' || g || '.example.test/in', ARRAY['assignment.graded'],
              CASE WHEN g % 7 = 0 THEN 'paused' ELSE 'active' END, CASE WHEN g % 7 = 0 THEN 'ops' END,
              now() - make_interval(days => g), CASE WHEN g % 10 = 0 THEN now() END, CASE WHEN g % 10 = 0 THEN 'old' END, CASE WHEN g % 10 = 0 THEN 'test' END
         FROM generate_series(1, 3000) g`,
    );
    const snapshot = () => tableRows(pool!, "subscriptions", ["id"]);
    const before = await snapshot();
    expect(before).toHaveLength(3000);

    expect(await mdb.applyRest()).toContain(mdb.rest[0]);
    expect(asBefore(before, await snapshot())).toEqual(before);

    await pool.query("ANALYZE subscriptions");
    const c = await pool.connect();
    try {
      // What the planner does with the list's statement (lib/subscriptions/list.ts) for a page after a cursor.
      await c.query("SET enable_seqscan = off");
      for (const [order, cursor, index] of [
        ["lower(name), id", "lower(name), id) > ('district 5', 'sub_0100'", "subscriptions_by_name"],
        ["coalesce(tenant, ''), lower(name), id", "coalesce(tenant, ''), lower(name), id) > ('tenant_2', 'district 5', 'sub_0100'", "subscriptions_by_tenant"],
        ["state, lower(name), id", "state, lower(name), id) > ('active', 'district 5', 'sub_0100'", "subscriptions_by_state"],
        ["created_at DESC, id DESC", "created_at, id) < (now() - interval '100 days', 'sub_0100'", "subscriptions_by_created"],
      ]) {
        const plan = (await c.query(`EXPLAIN SELECT id FROM subscriptions WHERE archived_at IS NULL AND (${cursor}) ORDER BY ${order} LIMIT 51`)).rows
          .map((r) => r["QUERY PLAN"])
          .join("\n");
        expect(plan, plan).toContain(`Index Scan${order.includes("DESC") ? " Backward" : ""} using ${index}`);
        expect(plan).not.toMatch(/Sort/);
      }
    } finally {
      c.release();
    }
  });
});
