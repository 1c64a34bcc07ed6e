// A retention run a person started through the API, in a server that is
// stopping (SIGTERM from `hookledger start`, Ctrl-C): server.ts stops it
// between batches (lib/retention/running.ts), and its record says so, failed
// with why and counting what it removed, instead of `finished` or, had the
// process gone first, `running`. The next run removes the rest.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "./db";
import { seedFinishedWork, seedSubscription } from "./dashboard-seed";
import { beginTrackedRetention, runRetention } from "../lib/retention/service";
import { stopRetentionRuns } from "../lib/retention/running";

let db: TestDb;
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  await seedFinishedWork(db.pool, { subscriptionId: "sub_lin", tenant: "lincoln", prefix: "evt_stop_", n: 6, at: daysAgo(120) });
});

afterAll(async () => {
  await db?.close();
});

describe("a retention run in a stopping server", () => {
  it("stops between batches and is recorded as failed with why and what it removed; the next run finishes", async () => {
    const started = await beginTrackedRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 1 });
    await stopRetentionRuns(5_000);
    const r = await started!.done;
    expect(r.status).toBe("stopped");
    const { rows } = await db.pool.query("SELECT status, error, deliveries_removed FROM retention_runs WHERE id = $1", [started!.run.id]);
    expect(rows[0]).toMatchObject({ status: "failed", error: expect.stringMatching(/^stopped before it finished/), deliveries_removed: r.deliveries });
    const left = (await db.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n;
    expect(left).toBe(6 - r.deliveries);
    expect(left).toBeGreaterThan(0);
    const audit = await db.prisma.auditEntry.findFirst({ where: { action: "retention.run", targetId: started!.run.id! } });
    expect(audit?.details).toMatchObject({ stopped: true, deliveries: r.deliveries });

    const next = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
    expect(next).toMatchObject({ status: "finished", deliveries: left });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(0);
  });
});
