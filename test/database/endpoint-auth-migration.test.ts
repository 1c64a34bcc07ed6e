// Migration 0017 on a database that already holds data: migrated up to the
// migration before it, filled with subscriptions, secrets, events, deliveries
// and attempts, then migrated to the end. Every row keeps its values; the new
// columns are NULL (no headers, no client certificate) and test_sends is empty.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createSub, seedEvents } from "../helpers/worker-helpers";
import { databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;
let pool: pg.Pool | undefined;

afterAll(async () => {
  await pool?.end();
  await mdb?.close();
});

describe("migration 0017_endpoint_auth", () => {
  it("keeps every row of a database that holds data and adds empty endpoint auth", async () => {
    mdb = await databaseBefore("0017");
    pool = new pg.Pool({ connectionString: mdb.url, max: 2 });
    await createSub(pool, { id: "sub_old_a", url: "https://a.example.test/h" });
    await createSub(pool, { id: "sub_old_b", url: "https://b.example.test/h", state: "paused" });
    await seedEvents(pool, "evt_old_", 50, ["sub_old_a", "sub_old_b"]);
    const snapshot = async () => ({
      subs: await tableRows(pool!, "subscriptions", ["id"], ["id", "name", "url", "state", "event_types", "retry_policy", "created_at"]),
      secrets: await tableRows(pool!, "subscription_secrets", ["id"], ["id", "subscription_id", "secret"]),
      events: (await pool!.query("SELECT count(*)::int AS n FROM events")).rows[0].n,
      deliveries: await tableRows(pool!, "deliveries", ["id"], ["id", "state", "delivery_key", "subscription_id", "event_id"]),
    });
    const before = await snapshot();
    expect(before.events).toBe(50);
    expect(before.deliveries).toHaveLength(100);

    const applied = await mdb.applyRest();
    expect(applied).toContain(mdb.rest[0]);
    expect(await snapshot()).toEqual(before);
    const { rows } = await pool.query("SELECT id, endpoint_headers, endpoint_header_view, endpoint_tls, endpoint_tls_view FROM subscriptions ORDER BY id");
    expect(rows).toEqual([
      { id: "sub_old_a", endpoint_headers: null, endpoint_header_view: null, endpoint_tls: null, endpoint_tls_view: null },
      { id: "sub_old_b", endpoint_headers: null, endpoint_header_view: null, endpoint_tls: null, endpoint_tls_view: null },
    ]);
    expect((await pool.query("SELECT count(*)::int AS n FROM test_sends")).rows[0].n).toBe(0);
    // A test send of an old subscription can be recorded, with its id made by the database.
    await pool.query(
      "INSERT INTO test_sends (subscription_id, actor, event_type, url, duration_ms) VALUES ('sub_old_a', 'user:x', 'hookledger.ping', 'https://a.example.test/h', 5)",
    );
    expect((await pool.query("SELECT id FROM test_sends")).rows[0].id).toMatch(/^tst_/);
  });
});
