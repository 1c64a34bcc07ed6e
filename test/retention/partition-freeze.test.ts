// A deliveries month being emptied by retention is frozen (migration 0030,
// lib/ledger/sql/freeze.ts): the workers leave it out of their statements, so
// its ACCESS EXCLUSIVE lock does not hold up the drain.
//
// - The claim and the result write with a month frozen take no lock on it
//   (pg_locks), and without the freeze they do (what made the drain wait).
// - A real worker keeps delivering fresh events while the month is locked
//   (held for seconds by the compaction's test hook): every one published
//   after the lock was taken reaches the receiver before it is released. A
//   row of the frozen month that was in flight has its result held and
//   written once the month is free: one attempt, delivered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { FAST, createSub, delivered, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { startWorker, type DeliveryWorker } from "../../worker/worker";
import { publishEventStandalone } from "../../lib/events/publish";
import { compactPartition, ensurePartitions, monthStart, partitionName } from "../../lib/ledger/sql/partitions";
import { deliveryGoneIn, deliveryKeptRows, settleDroppedDeliveries, type TenantDays } from "../../lib/ledger/sql/retention";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { writeResults } from "../../lib/ledger/sql/write-results";
import type { Freeze } from "../../lib/ledger/sql/freeze";

let db: TestDb;
let receiver: Receiver;
let worker: DeliveryWorker | null = null;
// The 5th month back, mid-month: ended well before a 90-day cutoff.
const old = new Date(monthStart(new Date(), -5).getTime() + 14 * 86_400_000);
const month = partitionName("deliveries", old);
const frozen: Freeze[] = [{ gen: 1, partition: month, lo: monthStart(old), hi: monthStart(old, 1), inFlight: {} }];
const days: TenantDays = { defaultDays: 90, overrides: [] };
/** Held by the slow endpoint until released. */
let releaseSlow: () => void = () => {};
const slowAnswered = new Promise<void>((r) => (releaseSlow = r));

/** `n` events dated `at`, one delivery each to `sub` in `state` (finished ones delivered at `at`). */
async function seedOld(prefix: string, n: number, sub: string, state: "delivered" | "pending") {
  await db.pool.query(
    `WITH ev AS (
       INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
       SELECT $1 || g, 'old.thing', convert_to('{}', 'UTF8'), $2::timestamptz, NULL, '{}', '{}', $2::timestamptz + g * interval '1 second'
         FROM generate_series(1, $3::int) g RETURNING id, created_at)
     INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, delivered_at, next_attempt_at, created_at, updated_at, event_at)
     SELECT hl_delivery_key($4, ev.id), ev.id, $4, 'old.thing', $5, CASE WHEN $5 = 'delivered' THEN 1 ELSE 0 END, CASE WHEN $5 = 'delivered' THEN 1 ELSE 0 END,
            CASE WHEN $5 = 'delivered' THEN ev.created_at END, CASE WHEN $5 = 'pending' THEN now() ELSE ev.created_at END, ev.created_at, ev.created_at, ev.created_at
       FROM ev`,
    [prefix, old, n, sub, state],
  );
}

/** The relations of `month` (the table and its indexes) this backend holds a lock on. */
async function monthLocks(c: { query: TestDb["pool"]["query"] }): Promise<string[]> {
  const { rows } = await c.query<{ rel: string }>(
    `SELECT c.relname AS rel FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
      WHERE l.pid = pg_backend_pid() AND (c.relname = $1 OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass))`,
    [month],
  );
  return rows.map((r) => r.rel);
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver(async (req, res) => {
    if (req.url?.endsWith("/slow")) await slowAnswered;
    res.statusCode = 204;
    res.end();
  });
  await ensurePartitions(db.pool, { from: monthStart(old) });
  await createSub(db.pool, { id: "sub_live", url: `${receiver.url}/ok`, maxConcurrency: 20 });
  await createSub(db.pool, { id: "sub_slow", url: `${receiver.url}/slow`, eventTypes: ["old.thing"], retryPolicy: { timeoutMs: 60_000 } });
  await createSub(db.pool, { id: "sub_done", url: `${receiver.url}/ok`, eventTypes: ["old.thing"], state: "paused" });
  await seedOld("evt_done_", 50, "sub_done", "delivered");
});

afterAll(async () => {
  releaseSlow();
  await worker?.stop();
  await receiver?.close();
  await db?.close();
});

describe("a frozen deliveries month", () => {
  it("is not locked by the claim or the result write that leave it out, and is locked by those that do not", async () => {
    await seedOld("evt_lock_", 1, "sub_slow", "pending");
    for (const f of [frozen, []]) {
      const c = await db.pool.connect();
      try {
        await c.query("BEGIN");
        const claimed = await claimDeliveries(c, { owner: "w-locks", limit: 10, perSubscription: 10, leaseSlackSeconds: 5, excludeSubscriptions: [], frozen: f });
        const result = claimed.map(delivered);
        await writeResults(c, "w-locks", result, f);
        if (f.length > 0) {
          // The frozen month's due row is not claimed, and nothing of the month is locked.
          expect(claimed.map((r) => r.eventId)).toEqual([]);
          expect(await monthLocks(c)).toEqual([]);
        } else {
          expect(claimed.map((r) => r.eventId)).toEqual(["evt_lock_1"]);
          expect(await monthLocks(c)).toContain(month);
        }
      } finally {
        await c.query("ROLLBACK");
        c.release();
      }
    }
    await db.pool.query("DELETE FROM deliveries WHERE event_id = 'evt_lock_1'");
  });

  it("keeps the worker delivering while retention holds the month's lock, and writes the month's held result after", async () => {
    await seedOld("evt_slow_", 1, "sub_slow", "pending");
    worker = startWorker({ databaseUrl: db.url, ...FAST });
    // The frozen month's row goes on the wire before the freeze, and its endpoint answers only once the lock is held.
    await waitFor(
      async () => (await db.pool.query("SELECT 1 FROM deliveries WHERE event_id = 'evt_slow_1' AND state = 'in_flight'")).rowCount === 1,
      10_000,
      "the old row's claim",
    );
    let lockedAt = 0;
    let releasedAt = 0;
    let deliveredWhileLocked = 0;
    let inFlightCounted: unknown = null;
    const seen = () => receiver.received.filter((r) => r.body.toString().includes('"fresh"')).length;
    const r = await compactPartition(
      db.pool,
      month,
      { anyGone: deliveryGoneIn(days, month), keptRows: deliveryKeptRows(days, month), settle: (c) => settleDroppedDeliveries(c, month) },
      {
        locked: async (c) => {
          lockedAt = Date.now();
          inFlightCounted = (await c.query('SELECT in_flight FROM partition_freezes WHERE "partition" = $1', [month])).rows[0]?.in_flight;
          // The month's endpoint answers now: its result must wait for the lock to go.
          releaseSlow();
          const before = seen();
          for (let i = 0; i < 20; i++) await publishEventStandalone(db.prisma, { id: `evt_fresh_${i}`, type: "assignment.graded", data: { fresh: true } });
          const until = Date.now() + 8_000;
          while (seen() - before < 20 && Date.now() < until) await new Promise((res) => setTimeout(res, 25));
          deliveredWhileLocked = seen() - before;
          releasedAt = Date.now();
        },
      },
    );
    expect(lockedAt).toBeGreaterThan(0);
    expect(r).toMatchObject({ swapped: true, removed: 50, kept: 1 });
    // Every fresh event published while the month was locked reached its endpoint before the lock went.
    expect(deliveredWhileLocked).toBe(20);
    expect(inFlightCounted).toEqual({ sub_slow: 1 });
    // The old row's result, held while its month was frozen, is written once it is free: delivered, one attempt.
    const old = await waitFor(
      async () => (await db.pool.query("SELECT attempt_count FROM deliveries WHERE event_id = 'evt_slow_1' AND state = 'delivered'")).rows[0],
      10_000,
      "the old row's held result",
    );
    expect(old.attempt_count).toBe(1);
    const { rows: att } = await db.pool.query(
      "SELECT count(*)::int AS n, min(a.created_at) AS at FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.event_id = 'evt_slow_1'",
    );
    expect(att[0].n).toBe(1);
    expect(new Date(att[0].at).getTime()).toBeGreaterThanOrEqual(releasedAt - 50);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM partition_freezes")).rows[0].n).toBe(0);
    const { rows: hb } = await db.pool.query("SELECT freeze_seen FROM worker_heartbeats WHERE worker_id = $1", [worker.workerId]);
    expect(Number(hb[0].freeze_seen)).toBeGreaterThan(0);
  }, 60_000);
});
