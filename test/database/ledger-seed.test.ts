// The test and bench seeders (lib/ledger/sql/seed.ts) write what the benches
// assume: pending rows through the one enqueue path, one subscription per
// event in round robin, fan-out only to the listed subscriptions, and fixture
// rows in other states without firing the operational-event triggers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { seedEventsFanOut, seedFixtureDeliveries, seedRoundRobin } from "../../lib/ledger/sql/seed";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const id of ["sub_a", "sub_b", "sub_c"])
    await db.pool.query("INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ($1, $1, $1, 'https://x.example.test/h', '{assignment.graded}')", [id]);
  for (const id of ["sub_x", "sub_y"])
    await db.pool.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ($1, $1, 'https://x.example.test/h', '{assignment.graded}')", [id]);
  // Not listed anywhere below: must receive nothing.
  await db.pool.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_other', 'o', 'https://o.example.test/h', '{*}')");
});
afterAll(async () => db?.close());

const rows = async (prefix: string) =>
  (
    await db.pool.query(
      `SELECT d.event_id, d.subscription_id, d.delivery_key, d.state, e.subject_values, e.payload
         FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.event_id LIKE $1 || '%' ORDER BY d.event_id`,
      [prefix],
    )
  ).rows;

describe("seeders", () => {
  it("round robin: event g enqueued once, to subs[g mod 3], pending, with its envelope and subject values", async () => {
    expect(await seedRoundRobin(db.pool, { prefix: "rr_", from: 1, to: 9, subs: ["sub_a", "sub_b", "sub_c"], eventType: "assignment.graded", padBytes: 10 })).toBe(9);
    const r = await rows("rr_");
    expect(r).toHaveLength(9);
    for (const d of r) {
      const g = Number(d.event_id.slice(3));
      expect(d.subscription_id).toBe(["sub_a", "sub_b", "sub_c"][g % 3]);
      expect(d.state).toBe("pending");
      expect(d.delivery_key).toBe(deliveryKey(d.subscription_id, d.event_id));
      expect(d.subject_values).toEqual([`stu_${g}`, `studentId:stu_${g}`]);
      expect(JSON.parse(d.payload.toString("utf8"))).toMatchObject({
        id: d.event_id,
        type: "assignment.graded",
        data: { studentId: `stu_${g}`, comment: "x".repeat(10) },
      });
    }
  });

  it("fan-out: every event to each listed subscription and no other (matching still applies: the events have no tenant)", async () => {
    expect(await seedEventsFanOut(db.pool, "fo_", 4, ["sub_x", "sub_y", "sub_a"])).toBe(8);
    const r = await rows("fo_");
    expect(new Set(r.map((d) => d.subscription_id))).toEqual(new Set(["sub_x", "sub_y"]));
  });

  it("fixtures: dead letters written as such, without operational events", async () => {
    const events = async () => Number((await db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);
    const before = await events();
    await seedFixtureDeliveries(db.pool, {
      prefix: "dl_",
      from: 1,
      to: 5,
      subs: ["sub_b"],
      eventType: "assignment.graded",
      padBytes: 0,
      state: "dead_letter",
      attemptCount: 7,
      dueOffsetSql: "interval '0'",
    });
    const r = await rows("dl_");
    expect(r.map((d) => d.state)).toEqual(Array(5).fill("dead_letter"));
    for (const d of r) expect(d.delivery_key).toBe(deliveryKey(d.subscription_id, d.event_id));
    expect(await events()).toBe(before + 5); // no hookledger.delivery.dead_lettered events
  });
});
