// A retention run a person started through the API, in a server that is
// stopping (SIGTERM from `hookledger start`, Ctrl-C): server.ts stops it
// between batches (lib/retention/running.ts), and its record says so, failed
// with why and counting what it removed, instead of `finished` or, had the
// process gone first, `running`. The next run removes the rest.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { daysAgo, seedFinishedWork, seedSubscription } from "../helpers/dashboard-seed";
import { beginTrackedRetention, getRetentionOverview, runRetention } from "../../lib/retention/run-retention";
import { ABANDONED, RETENTION_LOCK } from "../../lib/ledger/sql/retention";
import { stopRetentionRuns } from "../../lib/retention/running";

let db: TestDb;

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

  it("a run whose process is gone (killed: no session holds the lock) reads as failed at once; one whose runner holds the lock reads as running", async () => {
    // A record as a run writes it first; its process then killed outright, so nothing finished it.
    await db.pool.query("INSERT INTO retention_runs (id, trigger, actor, policy) VALUES ('rr_killed', 'manual', 'token:test-admin', '{}')");
    const runOf = async () => (await getRetentionOverview(db.pool)).runs.find((r) => r.id === "rr_killed")!;
    expect(await runOf()).toMatchObject({ status: "failed", error: ABANDONED, finishedAt: null });

    // The same record while a session holds the lock, as a live run's does: running.
    const holder = await db.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [RETENTION_LOCK]);
      expect(await runOf()).toMatchObject({ status: "running", error: null });
      await holder.query("SELECT pg_advisory_unlock($1)", [RETENTION_LOCK]);
    } finally {
      holder.release();
    }
    // The next run records it as failed in the table too.
    await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
    const { rows } = await db.pool.query("SELECT status, error FROM retention_runs WHERE id = 'rr_killed'");
    expect(rows[0]).toMatchObject({ status: "failed", error: expect.stringMatching(/stopped before it finished/) });
  });
});
