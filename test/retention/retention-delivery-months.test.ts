// Retention of deliveries by whole months (migration 0029: a delivery lives in
// its event's month). A month that ended before the cutoff is emptied of all
// but the deliveries still needed, found through the month's indexes:
// exactly the rows the row-by-row expiry would keep (every state but
// finished, finished after the tenant's cutoff, named by a running batch,
// with an attempt not yet rolled up). The dropped deliveries leave the state
// counters as a delete would, and the finished batches' items naming them go.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { rollupAttemptStats } from "../../lib/rollups/sampler";
import { ensurePartitions, monthStart, partitionName } from "../../lib/ledger/sql/partitions";
import { deliveryKept, deliveryKeptRows, putOverride, type TenantDays } from "../../lib/ledger/sql/retention";
import { queryRows, raw, sql } from "../../lib/ledger/read/db";
import { runRetention } from "../../lib/retention/run-retention";

let db: TestDb;
// The 5th month back, mid-month: ended well before a 90-day cutoff.
const old = new Date(monthStart(new Date(), -5).getTime() + 14 * 86_400_000);
const month = partitionName("deliveries", old);
const days: TenantDays = { defaultDays: 90, overrides: [{ tenant: "roosevelt", days: 400 }] };
const ids: Record<string, string> = {};

/** A delivery of a new event dated `old`, in `state`, finished (or dead-lettered) at `finished`. */
async function seed(name: string, state: string, o: { tenant?: string; finished?: Date; sub?: string } = {}) {
  await seedEvent(db.pool, { id: `evt_${name}`, createdAt: old, subject: o.tenant ? { tenant: o.tenant } : {} });
  const at = o.finished ?? old;
  const id = await seedDelivery(db.pool, {
    subscriptionId: o.sub ?? "sub_a",
    eventId: `evt_${name}`,
    state: state === "resolved" ? "dead_letter" : state,
    attempts: state === "pending" ? [] : [{ at, outcome: state === "delivered" ? "delivered" : "retry", status: state === "delivered" ? 200 : 503 }],
  });
  if (state === "resolved")
    await db.pool.query(
      "UPDATE deliveries SET state = 'resolved', resolution = 'discarded', resolved_at = $2, resolved_by = 'cli:t', resolution_reason = 'r' WHERE id = $1",
      [id, at],
    );
  await db.pool.query("UPDATE attempts SET created_at = $2 WHERE delivery_id = $1", [id, at]);
  ids[name] = id;
  return id;
}

const counters = async () =>
  (await db.pool.query("SELECT subscription_id, state, sum(n)::int AS n FROM delivery_state_counts GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2")).rows;
const actual = async () => (await db.pool.query("SELECT subscription_id, state, count(*)::int AS n FROM deliveries GROUP BY 1, 2 ORDER BY 1, 2")).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  await ensurePartitions(db.pool, { from: monthStart(old) });
  await putOverride(db.pool, "roosevelt", { retentionDays: 400, payloadRetentionDays: null }, "cli:t");
  await seedSubscription(db.pool, { id: "sub_a", name: "A", tenant: null });
  await seedSubscription(db.pool, { id: "sub_b", name: "B", tenant: null });
  const recent = new Date(Date.now() - 5 * 86_400_000);
  for (let i = 0; i < 4; i++) await seed(`old_delivered_${i}`, "delivered");
  await seed("old_delivered_b", "delivered", { sub: "sub_b" });
  await seed("old_resolved", "resolved");
  await seed("pending", "pending");
  await seed("scheduled", "scheduled");
  await seed("in_flight", "in_flight");
  await seed("dead", "dead_letter");
  await seed("redelivered_lately", "delivered", { finished: recent });
  await seed("roosevelt_old", "delivered", { tenant: "roosevelt" });
  await seed("in_running_batch", "delivered");
  await seed("in_finished_batch", "delivered");
  await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
  // After the rollup: this one's attempt is not folded into the per-minute stats yet.
  await seed("unrolled", "delivered");
  await db.pool.query(`INSERT INTO redrive_batches (id, filter, reason, actor, rate_per_second, status) VALUES
                         ('rdb_run', '{}', 'r', 'cli:t', 10, 'running'), ('rdb_done', '{}', 'r', 'cli:t', 10, 'done')`);
  await db.pool.query(
    `INSERT INTO redrive_batch_items (batch_id, seq, delivery_id, event_id) VALUES ('rdb_run', 1, $1, 'evt_in_running_batch'), ('rdb_done', 1, $2, 'evt_in_finished_batch')`,
    [ids.in_running_batch, ids.in_finished_batch],
  );
});

afterAll(async () => {
  await db?.close();
});

describe("deliveries by whole months", () => {
  it("the month's indexes find exactly the rows the expiry keeps", async () => {
    const byKeep = await queryRows<{ id: string }>(db.pool, sql`SELECT o.id FROM ${raw(`"${month}"`)} o WHERE ${deliveryKept(days)} ORDER BY o.id`);
    const byRows = await queryRows<{ id: string }>(db.pool, sql`SELECT k.id FROM (${deliveryKeptRows(days, month)}) k ORDER BY k.id`);
    expect(byRows).toEqual(byKeep);
    const kept = ["pending", "scheduled", "in_flight", "dead", "redelivered_lately", "roosevelt_old", "in_running_batch", "unrolled"].map((n) => ids[n]).sort();
    expect(byRows.map((r) => r.id)).toEqual(kept);
  });

  it("empties the month but for its kept rows; the counters and the batch items follow", async () => {
    expect(await counters()).toEqual(await actual());
    const storage = Number((await db.pool.query("SELECT relfilenode FROM pg_class WHERE relname = $1", [month])).rows[0].relfilenode);
    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", compactFrom: 1 });
    // Four old delivered of sub_a, one of sub_b, the old resolved one, the finished batch's, and the unrolled one: the run
    // rolls the attempt stats up first, so its attempt is folded by then.
    expect(r?.deliveries).toBe(8);
    expect(r?.partitions).toBeGreaterThanOrEqual(1);
    // Emptied in place: the month's table is a new one (a truncate gives it new storage).
    expect(Number((await db.pool.query("SELECT relfilenode FROM pg_class WHERE relname = $1", [month])).rows[0].relfilenode)).not.toBe(storage);
    const left = (await db.pool.query("SELECT id, tableoid::regclass::text AS p FROM deliveries ORDER BY id")).rows;
    expect(left.map((x) => x.id)).toEqual(
      ["pending", "scheduled", "in_flight", "dead", "redelivered_lately", "roosevelt_old", "in_running_batch"].map((n) => ids[n]).sort(),
    );
    expect(new Set(left.map((x) => x.p))).toEqual(new Set([month]));
    // The counters say what the table holds, as row deletes would have left them.
    expect(await counters()).toEqual(await actual());
    // The finished batch's item went with its delivery; the running batch's stays.
    expect((await db.pool.query("SELECT batch_id FROM redrive_batch_items ORDER BY 1")).rows).toEqual([{ batch_id: "rdb_run" }]);
  });

  it("a month emptied before, with few finished rows, loses what expires later row by row, not locked and emptied again", async () => {
    for (let i = 0; i < 3; i++) await seed(`later_${i}`, "delivered");
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const storage = Number((await db.pool.query("SELECT relfilenode FROM pg_class WHERE relname = $1", [month])).rows[0].relfilenode);
    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
    expect(r?.deliveries).toBe(3);
    expect(Number((await db.pool.query("SELECT relfilenode FROM pg_class WHERE relname = $1", [month])).rows[0].relfilenode)).toBe(storage);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_later_%'")).rows[0].n).toBe(0);
    expect(await counters()).toEqual(await actual());
  });
});
