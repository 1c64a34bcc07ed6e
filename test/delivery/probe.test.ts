// The failure window's statements one by one, on real Postgres: the run of
// failed attempts the result write keeps (and leaves alone for a healthy
// subscription), the probe claim (one prober per subscription), the probe
// schedule backing off to hourly, a probe that gets no answer, a probe that
// meets a manual resume, and the endpoint's headers on a real probe.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, delivered, retried503, seedEvents, startReceiver, waitFor, worker } from "../helpers/worker-helpers";
import { claimDeliveries, type ClaimedRow } from "../../lib/ledger/sql/claim";
import { writeResults, type AttemptResult } from "../../lib/ledger/sql/write-results";
import { claimDueProbes, recordProbe } from "../../lib/ledger/sql/probe";
import { updateSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

const sub = async (id: string) => (await db.pool.query("SELECT * FROM subscriptions WHERE id = $1", [id])).rows[0];

function result(row: ClaimedRow, ok: boolean, startedAt: Date): AttemptResult {
  return { ...(ok ? delivered(row) : retried503(row, new Date(Date.now() + 3600_000))), startedAt };
}

/** Claims every due row of `id` and writes `outcomes` for them in one batch (true: delivered), attempt i started i seconds after `t0`. */
async function attempt(id: string, outcomes: boolean[], t0 = new Date()) {
  const rows = await claimDeliveries(db.pool, { owner: "w1", limit: 100, perSubscription: 100, leaseSlackSeconds: 30, excludeSubscriptions: [] });
  const mine = rows.filter((r) => r.subscriptionId === id);
  expect(mine.length).toBeGreaterThanOrEqual(outcomes.length);
  await writeResults(
    db.pool,
    "w1",
    outcomes.map((ok, i) => result(mine[i], ok, new Date(t0.getTime() + i * 1000))),
  );
  // Rows claimed and not written go back.
  await db.pool.query("UPDATE deliveries SET state = 'pending', lease_owner = NULL, leased_at = NULL, lease_until = NULL WHERE state = 'in_flight'");
}

describe("the run of failed attempts (result write)", () => {
  it("counts failures, ends the run on a success, counts only failures after a batch's last success, and writes nothing for a healthy subscription", async () => {
    await createSub(db.pool, { id: "sub_run", url: "http://127.0.0.1:9/hooks", maxConcurrency: 100 });
    await seedEvents(db.pool, "evt_run_", 20, ["sub_run"]);
    const t0 = new Date(Date.now() - 60_000);
    await attempt("sub_run", [false, false], t0);
    expect(await sub("sub_run")).toMatchObject({ failing_attempts: 2, failing_since: t0, state: "active" });
    await attempt("sub_run", [false]);
    expect((await sub("sub_run")).failing_attempts).toBe(3);
    expect((await sub("sub_run")).failing_since).toEqual(t0);
    // failure, success, failure, failure: the run restarts at the third. (Started half a minute ago, so that the
    // success below, started now, comes after them: a success that started before a run's first failure does not end it.)
    const t1 = new Date(Date.now() - 30_000);
    await attempt("sub_run", [false, true, false, false], t1);
    expect(await sub("sub_run")).toMatchObject({ failing_attempts: 2, failing_since: new Date(t1.getTime() + 2000) });
    await attempt("sub_run", [true]);
    expect(await sub("sub_run")).toMatchObject({ failing_attempts: 0, failing_since: null });
    // Healthy: successes leave the row untouched (its xmin does not move).
    const before = (await db.pool.query("SELECT xmin::text AS x FROM subscriptions WHERE id = 'sub_run'")).rows[0].x;
    await attempt("sub_run", [true, true]);
    expect((await db.pool.query("SELECT xmin::text AS x FROM subscriptions WHERE id = 'sub_run'")).rows[0].x).toBe(before);
  });

  it("does not pause before the window has passed, nor with fewer attempts than the policy asks", async () => {
    await createSub(db.pool, { id: "sub_young", url: "http://127.0.0.1:9/hooks", maxConcurrency: 100 });
    await db.pool.query("UPDATE subscriptions SET failure_window_seconds = 600, failure_min_attempts = 3, probe_interval_seconds = 60 WHERE id = 'sub_young'");
    await seedEvents(db.pool, "evt_young_", 10, ["sub_young"]);
    // Five failures in the last minute: window not passed.
    await attempt("sub_young", [false, false, false, false, false], new Date(Date.now() - 60_000));
    expect((await sub("sub_young")).state).toBe("active");
    // The run began 20 min ago but has two attempts only.
    await db.pool.query("UPDATE subscriptions SET failing_since = now() - interval '20 minutes', failing_attempts = 1 WHERE id = 'sub_young'");
    await attempt("sub_young", [false]);
    expect((await sub("sub_young")).state).toBe("active");
    // The third does it.
    await attempt("sub_young", [false]);
    expect(await sub("sub_young")).toMatchObject({ state: "paused", paused_reason: "failing", failing_attempts: 3 });
  });
});

describe("probes", () => {
  it("one prober per subscription: concurrent claims take disjoint sets, a claimed probe is not due again until its lease ends, and only pauses for failing are probed", async () => {
    for (let i = 0; i < 6; i++) {
      await createSub(db.pool, { id: `sub_pc${i}`, url: "http://127.0.0.1:9/hooks" });
      await db.pool.query(
        "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), next_probe_at = now() - interval '1 second' WHERE id = $1",
        [`sub_pc${i}`],
      );
    }
    // A manual pause is never probed, nor an archived subscription.
    await db.pool.query("UPDATE subscriptions SET paused_reason = 'manual' WHERE id = 'sub_pc5'");
    await createSub(db.pool, { id: "sub_pc_archived", url: "http://127.0.0.1:9/hooks" });
    await db.pool.query(
      "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), next_probe_at = now(), archived_at = now(), archive_reason = 'gone', archived_by = 'user:a' WHERE id = 'sub_pc_archived'",
    );
    const claims = await Promise.all(Array.from({ length: 4 }, () => claimDueProbes(db.pool, { limit: 10, leaseSeconds: 60 })));
    const ids = claims.flat().map((p) => p.id);
    expect(ids.sort()).toEqual(["sub_pc0", "sub_pc1", "sub_pc2", "sub_pc3", "sub_pc4"]);
    expect(await claimDueProbes(db.pool, { limit: 10, leaseSeconds: 60 })).toEqual([]);
  });

  it("probes at the interval four times, then doubling, never past hourly; a probe with no answer is recorded with its error", async () => {
    await db.pool.query("UPDATE subscriptions SET failure_window_seconds = 3600, failure_min_attempts = 5, probe_interval_seconds = 900 WHERE id = 'sub_pc0'");
    const gaps: number[] = [];
    for (let n = 0; n < 7; n++) {
      const at = new Date();
      expect(await recordProbe(db.pool, { subscriptionId: "sub_pc0", status: null, error: "connect_refused: connection refused", latencyMs: 2, at })).toBe("failing");
      const s = await sub("sub_pc0");
      gaps.push(Math.round((s.next_probe_at.getTime() - Date.now()) / 60_000));
    }
    expect(gaps).toEqual([15, 15, 15, 15, 30, 60, 60]);
    expect(await sub("sub_pc0")).toMatchObject({ probe_count: 7, last_probe_status: null, last_probe_error: "connect_refused: connection refused", state: "paused" });
  });

  it("an answer that arrives after a manual resume changes nothing", async () => {
    await updateSubscription(db.prisma, "sub_pc1", { state: "active" }, SYSTEM);
    expect(await recordProbe(db.pool, { subscriptionId: "sub_pc1", status: 200, error: null, latencyMs: 2, at: new Date() })).toBe("gone");
    expect(await recordProbe(db.pool, { subscriptionId: "sub_pc1", status: 503, error: "HTTP 503", latencyMs: 2, at: new Date() })).toBe("gone");
    expect(await sub("sub_pc1")).toMatchObject({ state: "active", last_probe_at: null });
    const resumes = await db.pool.query("SELECT actor FROM audit_entries WHERE target_id = 'sub_pc1' AND action = 'subscription.resume'");
    expect(resumes.rows).toEqual([{ actor: SYSTEM.actor }]);
  });

  it("a real probe carries the endpoint's own headers, and a 2xx resumes the subscription", async () => {
    const rx = await startReceiver((_q, res) => {
      res.statusCode = 202;
      res.end();
    });
    const w = worker(db.url);
    try {
      await createSub(db.pool, { id: "sub_hdr", url: rx.url });
      await updateSubscription(db.prisma, "sub_hdr", { headers: { "X-District-Key": "k-123" } }, SYSTEM);
      await db.pool.query("UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), next_probe_at = now() WHERE id = 'sub_hdr'");
      await waitFor(async () => ((await sub("sub_hdr")).state === "active" ? true : null), 15_000, "the probe to resume sub_hdr");
      const probe = rx.received.find((r) => r.id.startsWith("probe_"))!;
      expect(probe.headers["x-district-key"]).toBe("k-123");
      expect(JSON.parse(probe.body.toString("utf8"))).toMatchObject({ type: "hookledger.ping", data: { subscriptionId: "sub_hdr", purpose: "probe" } });
      expect(await sub("sub_hdr")).toMatchObject({ last_probe_status: 202, paused_reason: null });
    } finally {
      await w.stop();
      await rx.close();
    }
  });
});
