// The daily retention run as the workers start it: several processes' loops
// check often, but the run is once a day across all of them (the advisory
// lock, and the last scheduled run re-read under it); it is recorded by
// `system` and removes what expired. A malformed policy stops the loop (and
// so the worker) at start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { daysAgo, seedFinishedWork, seedSubscription } from "../helpers/dashboard-seed";
import { startRetentionScheduler } from "../../lib/retention/scheduler";
import { waitFor } from "../helpers/worker-helpers";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  await seedFinishedWork(db.pool, { subscriptionId: "sub_lin", tenant: "lincoln", prefix: "evt_", n: 20, at: daysAgo(100) });
});

afterAll(async () => {
  delete process.env.HOOKLEDGER_RETENTION_DAYS;
  await db?.close();
});

describe("the daily run", () => {
  it("three workers' loops checking every 50 ms run it once, as system, and it removes what expired", async () => {
    const loops = [0, 1, 2].map(() => startRetentionScheduler({ databaseUrl: db.url, firstCheckMs: 0, checkMs: 50, batch: 3 }));
    try {
      await waitFor(async () => (await db.pool.query("SELECT count(*)::int AS n FROM retention_runs WHERE status = 'finished'")).rows[0].n === 1, 20_000);
      // Many more checks, no second run.
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
    }
    const rows = (await db.pool.query("SELECT trigger, actor, status, deliveries_removed, events_removed FROM retention_runs")).rows;
    expect(rows).toEqual([{ trigger: "schedule", actor: "system", status: "finished", deliveries_removed: 20, events_removed: 20 }]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(0);
  });

  it("a malformed HOOKLEDGER_RETENTION_DAYS stops the loop at start, naming the variable", () => {
    process.env.HOOKLEDGER_RETENTION_DAYS = "90d";
    expect(() => startRetentionScheduler({ databaseUrl: db.url })).toThrow(/HOOKLEDGER_RETENTION_DAYS must be a whole number from 1 to 36500 \(got "90d"\)/);
  });
});
