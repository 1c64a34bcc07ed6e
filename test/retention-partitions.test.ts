// Retention on the month-partitioned ledger (migration 0021): a month of
// events and attempts whose every row has expired is dropped whole (its event
// keys first); a month that still holds a dead letter's attempts and event is
// not, and the expired rows in it go in batches; the counts in the record add
// up to the rows that went, and what is kept reads the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "./db";
import { seedDelivery, seedSubscription } from "./dashboard-seed";
import { rollupAttemptStats } from "../lib/dlq/sampler";
import { ensurePartitions, listPartitions, monthStart, partitionName } from "../lib/ledger/sql/partitions";
import { runRetention } from "../lib/retention/service";

let db: TestDb;
// Two whole months well past 90 days: the 6th and the 5th month back (mid-month, so no row sits on a boundary).
const m6 = new Date(monthStart(new Date(), -6).getTime() + 14 * 86_400_000);
const m5 = new Date(monthStart(new Date(), -5).getTime() + 14 * 86_400_000);

/** An event and its delivery written at `at` (event, delivery and attempt all dated then, as the ingest and worker would have). */
async function seedAt(id: string, at: Date, state: "delivered" | "dead_letter") {
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at) VALUES ($1, 'assignment.graded', $2, $3, 'lincoln', '{}', '{}', $3)`,
    [id, Buffer.from(`{"id":"${id}"}`), at],
  );
  const d = await seedDelivery(db.pool, { subscriptionId: "sub_lin", eventId: id, state, attempts: [{ at, outcome: state, status: state === "delivered" ? 200 : 422 }] });
  await db.pool.query("UPDATE deliveries SET created_at = $2 WHERE id = $1", [d, at]);
  await db.pool.query("UPDATE attempts SET created_at = $2 WHERE delivery_id = $1", [d, at]);
  return d;
}

const partitions = async () => (await listPartitions(db.pool)).map((p) => p.name);

beforeAll(async () => {
  db = await createTestDatabase();
  await ensurePartitions(db.pool, { from: monthStart(new Date(), -7) });
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  for (let i = 0; i < 5; i++) await seedAt(`evt_m6_${i}`, m6, "delivered");
  for (let i = 0; i < 3; i++) await seedAt(`evt_m5_${i}`, m5, "delivered");
  await seedAt("evt_m5_dead", m5, "dead_letter");
  await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
});

afterAll(async () => {
  await db?.close();
});

describe("month partitions", () => {
  it("drops a month whose rows have all expired, deletes the rest of an older month in batches, keeps the dead letter's month", async () => {
    expect(await partitions()).toEqual(
      expect.arrayContaining([partitionName("events", m6), partitionName("attempts", m6), partitionName("events", m5), partitionName("attempts", m5)]),
    );
    // Rows landed in their months, not the default partition.
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${partitionName("attempts", m6)}`)).rows[0].n).toBe(5);

    const before = await partitions();
    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    const names = await partitions();
    // The 6th month back and the empty months that ended before the cutoff; never the dead letter's month, the current month or a default partition.
    const dropped = before.filter((n) => !names.includes(n));
    expect(dropped.length).toBeGreaterThanOrEqual(2);
    const keptMonths = ["events", "attempts"].flatMap((t) => [partitionName(t as "events", m5), partitionName(t as "events", new Date()), `${t}_default`]);
    expect(dropped.filter((n) => keptMonths.includes(n) || !/_p\d{4}_\d{2}$/.test(n))).toEqual([]);
    expect(dropped).toEqual(expect.arrayContaining([partitionName("events", m6), partitionName("attempts", m6)]));
    expect(r).toMatchObject({ partitions: dropped.length, deliveries: 8, attempts: 8, events: 8 });

    expect(names).not.toContain(partitionName("events", m6));
    expect(names).not.toContain(partitionName("attempts", m6));
    expect(names).toContain(partitionName("events", m5));
    expect(names).toContain(partitionName("attempts", m5));
    // Only the dead letter, its attempt, its event and its key are left.
    expect((await db.pool.query("SELECT event_id FROM deliveries")).rows).toEqual([{ event_id: "evt_m5_dead" }]);
    expect((await db.pool.query("SELECT id FROM events")).rows).toEqual([{ id: "evt_m5_dead" }]);
    expect((await db.pool.query("SELECT id FROM event_keys")).rows).toEqual([{ id: "evt_m5_dead" }]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM attempts")).rows[0].n).toBe(1);
    const rec = (await db.pool.query("SELECT partitions_dropped, deliveries_removed, attempts_removed, events_removed FROM retention_runs")).rows;
    expect(rec).toEqual([{ partitions_dropped: dropped.length, deliveries_removed: 8, attempts_removed: 8, events_removed: 8 }]);
  });
});
