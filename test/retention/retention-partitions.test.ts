// Retention on the month-partitioned ledger (migrations 0021, 0029): a month of
// events and attempts whose every row has expired is dropped whole (its event
// keys first); a month that still holds a dead letter's attempts and event is
// swapped for a copy holding only those, with the month's indexes; the
// counts in the record add up to the rows that went, what is kept reads the
// same, and no attempt is left without its delivery (migration 0023 leaves
// that reference to the ledger's statements). A month whose lock is not
// granted is left whole for the next run, which takes it. A delivery or a
// running batch that names an event after its month was copied refuses the
// swap (deliveries have no foreign key to event_keys since migration 0028).
// Deliveries are months too (migration 0029, by their event's month); these
// small ones lose their expired rows one by one
// (test/retention/retention-delivery-months.test.ts covers emptying a month whole).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { seedDelivery, seedSubscription } from "../helpers/dashboard-seed";
import { rollupAttemptStats } from "../../lib/rollups/sampler";
import { ensurePartitions, listPartitions, monthStart, partitionName, swapPartition } from "../../lib/ledger/sql/partitions";
import { eventKept, KEYSET_START, removeDroppedEventKeys, removeExpiredEvents } from "../../lib/ledger/sql/retention";
import { createBackfillDeliveries, snapshotBackfillItems } from "../../lib/ledger/sql/backfill";
import { findAttempts } from "../../lib/ledger/sql/find-deliveries";
import { runRetention } from "../../lib/retention/run-retention";

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

const orphans = async () =>
  (await db.pool.query("SELECT count(*)::int AS n FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id)")).rows[0].n;
const indexesOf = async (table: string) =>
  (await db.pool.query("SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexdef", [table])).rows.map((r) =>
    r.indexdef.replace(` ${table} `, " <month> ").replace(/INDEX \S+ /, "INDEX "),
  );

describe("month partitions", () => {
  it("drops a month whose rows have all expired and swaps the dead letter's month for its kept rows", async () => {
    expect(await partitions()).toEqual(
      expect.arrayContaining([partitionName("events", m6), partitionName("attempts", m6), partitionName("events", m5), partitionName("attempts", m5)]),
    );
    // Rows landed in their months, not the default partition.
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${partitionName("attempts", m6)}`)).rows[0].n).toBe(5);
    const m5Indexes = {
      events: await indexesOf(partitionName("events", m5)),
      attempts: await indexesOf(partitionName("attempts", m5)),
      deliveries: await indexesOf(partitionName("deliveries", m5)),
    };
    const dead = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_m5_dead'")).rows[0].id;
    const deadAttempts = (await findAttempts(db.pool, [dead])).get(dead);
    expect(deadAttempts).toHaveLength(1);

    const before = await partitions();
    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    const names = await partitions();
    // The 6th month back and the empty months that ended before the cutoff; never the dead letter's month, the current month or a default partition.
    const dropped = before.filter((n) => !names.includes(n));
    expect(dropped.length).toBeGreaterThanOrEqual(2);
    const keptMonths = ["events", "attempts", "deliveries"].flatMap((t) => [partitionName(t as "events", m5), partitionName(t as "events", new Date()), `${t}_default`]);
    expect(dropped.filter((n) => keptMonths.includes(n) || !/_p\d{4}_\d{2}$/.test(n))).toEqual([]);
    expect(dropped).toEqual(expect.arrayContaining([partitionName("events", m6), partitionName("attempts", m6)]));
    // A deliveries month is never dropped; these, with a few rows each, lose their expired rows one by one
    // (a month is emptied whole only from COMPACT_FROM finished rows on: test/retention/retention-delivery-months.test.ts).
    expect(dropped.filter((n) => n.startsWith("deliveries"))).toEqual([]);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${partitionName("deliveries", m6)}`)).rows[0].n).toBe(0);
    // The dropped months and the dead letter's event and attempt months, swapped in place.
    expect(r).toMatchObject({ partitions: dropped.length + 2, deliveries: 8, attempts: 8, events: 8 });

    expect(names).not.toContain(partitionName("events", m6));
    expect(names).not.toContain(partitionName("attempts", m6));
    expect(names).toContain(partitionName("events", m5));
    expect(names).toContain(partitionName("attempts", m5));
    // Only the dead letter, its attempt, its event and its key are left, in the swapped month with the month's indexes.
    expect((await db.pool.query("SELECT event_id FROM deliveries")).rows).toEqual([{ event_id: "evt_m5_dead" }]);
    expect((await db.pool.query("SELECT id, tableoid::regclass::text AS p FROM events")).rows).toEqual([{ id: "evt_m5_dead", p: partitionName("events", m5) }]);
    expect((await db.pool.query("SELECT id FROM event_keys")).rows).toEqual([{ id: "evt_m5_dead" }]);
    expect((await db.pool.query("SELECT count(*)::int AS n, min(tableoid::regclass::text) AS p FROM attempts")).rows[0]).toEqual({
      n: 1,
      p: partitionName("attempts", m5),
    });
    expect(await indexesOf(partitionName("events", m5))).toEqual(m5Indexes.events);
    expect(await indexesOf(partitionName("attempts", m5))).toEqual(m5Indexes.attempts);
    expect(await indexesOf(partitionName("deliveries", m5))).toEqual(m5Indexes.deliveries);
    expect(m5Indexes.deliveries.length).toBeGreaterThanOrEqual(9);
    expect((await db.pool.query("SELECT tableoid::regclass::text AS p FROM deliveries")).rows).toEqual([{ p: partitionName("deliveries", m5) }]);
    expect((await findAttempts(db.pool, [dead])).get(dead)).toEqual(deadAttempts);
    expect(await orphans()).toBe(0);
    const rec = (await db.pool.query("SELECT partitions_dropped, deliveries_removed, attempts_removed, events_removed FROM retention_runs")).rows;
    expect(rec).toEqual([{ partitions_dropped: dropped.length + 2, deliveries_removed: 8, attempts_removed: 8, events_removed: 8 }]);

    // A second run finds nothing: the swapped months hold only what is kept.
    const again = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    expect(again).toMatchObject({ partitions: 0, deliveries: 0, attempts: 0, events: 0 });
  });

  it("a month whose lock is not granted is left whole, its removed deliveries' attempts unread; the next run swaps it", async () => {
    const m4 = new Date(monthStart(new Date(), -4).getTime() + 14 * 86_400_000);
    await ensurePartitions(db.pool, { from: monthStart(m4) }); // the first run dropped it empty
    for (let i = 0; i < 3; i++) await seedAt(`evt_m4_${i}`, m4, "delivered");
    await seedAt("evt_m4_dead", m4, "dead_letter");
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const month = partitionName("attempts", m4);
    // Another transaction writing into the month (an erasure's update, say) holds it past the swap's lock timeout.
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE ${month} IN ROW EXCLUSIVE MODE`);
      const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
      // The events month was swapped (the deliveries went row by row); the attempts month could not be.
      expect(r).toMatchObject({ deliveries: 3, attempts: 0, events: 3, partitions: 1 });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${month}`)).rows[0].n).toBe(4);
    expect(await orphans()).toBe(3);
    // Nothing reads them: every read of attempts goes through a delivery that is gone.
    const dead = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_m4_dead'")).rows[0].id;
    expect((await findAttempts(db.pool, [dead])).get(dead)).toHaveLength(1);

    const next = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    expect(next).toMatchObject({ deliveries: 0, attempts: 3, events: 0, partitions: 1 });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${month}`)).rows[0].n).toBe(1);
    expect(await orphans()).toBe(0);
  });
});

/** `fn` in a transaction of its own (removing event keys takes a lock held to the commit). */
async function inTransaction<T>(fn: (c: import("pg").PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    await c.query("BEGIN");
    const out = await fn(c);
    await c.query("COMMIT");
    return out;
  } catch (err) {
    await c.query("ROLLBACK");
    throw err;
  } finally {
    c.release();
  }
}

describe("what names an event after its month was copied", () => {
  const m7 = new Date(monthStart(new Date(), -7).getTime() + 14 * 86_400_000);
  const days = { defaultDays: 90, overrides: [] };
  const month = partitionName("events", m7);
  const addEvent = (id: string) =>
    db.pool.query(
      `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at) VALUES ($1, 'assignment.graded', '\\x7b7d', $2, 'lincoln', '{}', '{}', $2)`,
      [id, m7],
    );
  const stillThere = async () =>
    (await db.pool.query("SELECT e.id FROM events e JOIN event_keys k ON k.id = e.id WHERE e.id LIKE 'evt_m7_%' ORDER BY 1")).rows.map((r) => r.id);
  /** Swaps the month with `meanwhile` run on another connection (committed) between the copy and the removal of the keys. */
  const swapWith = (meanwhile: () => Promise<unknown>) =>
    swapPartition(db.pool, month, eventKept(days), {
      beforeSwap: async (c, copy) => {
        await meanwhile();
        await removeDroppedEventKeys(c, monthStart(m7), monthStart(m7, 1), copy);
      },
    });

  it("a delivery written for a dropped event refuses the swap, and the next run keeps that event", async () => {
    await ensurePartitions(db.pool, { from: monthStart(m7) });
    for (const id of ["evt_m7_late", "evt_m7_gone"]) await addEvent(id);
    await expect(swapWith(() => seedDelivery(db.pool, { subscriptionId: "sub_lin", eventId: "evt_m7_late", state: "pending" }))).rejects.toThrow(
      /named by a delivery or a running batch/,
    );
    expect(await stillThere()).toEqual(["evt_m7_gone", "evt_m7_late"]);
    expect((await listPartitions(db.pool)).map((p) => p.name)).toContain(month);

    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    expect(r).toMatchObject({ events: 1 });
    expect(await stillThere()).toEqual(["evt_m7_late"]);
    const lost = await db.pool.query("SELECT d.id FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM event_keys k JOIN events e ON e.id = k.id WHERE k.id = d.event_id)");
    expect(lost.rows).toEqual([]);
  });

  it("a backfill batch started for a dropped event refuses the swap, and keeps its item", async () => {
    await ensurePartitions(db.pool, { from: monthStart(m7) });
    await addEvent("evt_m7_backfill");
    const item = async () => {
      await db.pool.query(
        `INSERT INTO redrive_batches (id, kind, filter, reason, actor, rate_per_second, matched) VALUES ('rdb_m7', 'backfill', '{"subscriptionId":"sub_lin"}', 'late district', 'token:test-admin', 10, 1)`,
      );
      await db.pool.query("INSERT INTO redrive_batch_items (batch_id, seq, event_id) VALUES ('rdb_m7', 1, 'evt_m7_backfill')");
    };
    await expect(swapWith(item)).rejects.toThrow(/named by a delivery or a running batch/);
    expect(await stillThere()).toEqual(["evt_m7_backfill", "evt_m7_late"]);
    expect((await db.pool.query("SELECT event_id FROM redrive_batch_items WHERE batch_id = 'rdb_m7'")).rows).toEqual([{ event_id: "evt_m7_backfill" }]);
  });

  it("a backfill step writing a delivery while the row path runs keeps its event: the batch is running until the step commits", async () => {
    await addEvent("evt_m7_paced");
    await db.pool.query(
      `INSERT INTO redrive_batches (id, kind, filter, reason, actor, rate_per_second, matched) VALUES ('rdb_m7p', 'backfill', '{"subscriptionId":"sub_lin"}', 'late district', 'token:test-admin', 10, 1)`,
    );
    await db.pool.query("INSERT INTO redrive_batch_items (batch_id, seq, event_id) VALUES ('rdb_m7p', 1, 'evt_m7_paced')");
    const pacer = await db.pool.connect();
    try {
      // The pacer's last step: the delivery and the batch's end in one transaction, as lib/redrive/pacer.ts writes them.
      await pacer.query("BEGIN");
      const out = await createBackfillDeliveries(pacer, "rdb_m7p", "sub_lin", [{ seq: 1, event_id: "evt_m7_paced" }]);
      expect([...out.values()]).toEqual(["created"]);
      const removal = inTransaction((c) => removeExpiredEvents(c, "lincoln", 90, KEYSET_START, 100));
      await new Promise((r) => setTimeout(r, 300));
      await pacer.query("UPDATE redrive_batches SET status = 'done', finished_at = now() WHERE id = 'rdb_m7p'");
      await pacer.query("COMMIT");
      await removal;
    } finally {
      pacer.release();
    }
    await inTransaction((c) => removeExpiredEvents(c, "lincoln", 90, KEYSET_START, 100));
    expect(await stillThere()).toContain("evt_m7_paced");
    const lost = await db.pool.query("SELECT d.id FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM event_keys k JOIN events e ON e.id = k.id WHERE k.id = d.event_id)");
    expect(lost.rows).toEqual([]);
  });
  it("a backfill snapshotting its items while its events' keys are being removed waits for the removal, and names none of them", async () => {
    await addEvent("evt_m7_race");
    const removal = await db.pool.connect();
    const backfill = await db.pool.connect();
    try {
      await removal.query("BEGIN");
      const r = await removeExpiredEvents(removal, "lincoln", 90, KEYSET_START, 100);
      expect(r.events).toBeGreaterThan(0);
      // The backfill begins while the removal has not committed: the event is still there in its snapshot's eyes.
      await backfill.query("BEGIN");
      await backfill.query(
        `INSERT INTO redrive_batches (id, kind, filter, reason, actor, rate_per_second, matched) VALUES ('rdb_m7r', 'backfill', '{"subscriptionId":"sub_lin"}', 'late district', 'token:test-admin', 10, 0)`,
      );
      const items = snapshotBackfillItems(backfill, "rdb_m7r", {
        subscriptionId: "sub_lin",
        since: monthStart(m7).toISOString(),
        until: monthStart(m7, 1).toISOString(),
      });
      await new Promise((res) => setTimeout(res, 300));
      await removal.query("COMMIT");
      await items;
      await backfill.query("COMMIT");
    } finally {
      removal.release();
      backfill.release();
    }
    const { rows } = await db.pool.query(
      "SELECT i.event_id FROM redrive_batch_items i WHERE i.event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM event_keys k WHERE k.id = i.event_id)",
    );
    expect(rows).toEqual([]);
    expect(await stillThere()).not.toContain("evt_m7_race");
  });
});
