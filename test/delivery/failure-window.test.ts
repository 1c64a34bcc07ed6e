// The failure window: an endpoint that fails every attempt for its policy's
// window is paused for failing by the result write that tripped it (audit row
// and hookledger.subscription.paused in that transaction), its deliveries are
// held, a worker probes it with a signed hookledger.ping, and the first 2xx
// resumes it: the held deliveries go out oldest first with their own keys.
// Real Postgres, a real receiver, an in-process worker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, deliveryOf, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { updateSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { findSubscriptionHealth } from "../../lib/dashboard/subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import type { DeliveryWorker } from "../../worker/worker";

let db: TestDb;
let rx: Receiver;
/** What the receiver answers; the test flips it. */
let status = 503;
let w: DeliveryWorker;
let secret: string;

// Fast ladder: one second between attempts, never exhausted within the test.
const FAST_RETRIES = { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 };

async function sub(id: string) {
  return (await db.pool.query("SELECT * FROM subscriptions WHERE id = $1", [id])).rows[0];
}

/** A policy below the API's bounds (a window of 2 s), set as the tests may: straight on the row. */
async function shortWindow(id: string, windowSeconds = 2, minAttempts = 3, probeIntervalSeconds = 1) {
  await db.pool.query("UPDATE subscriptions SET failure_window_seconds = $2, failure_min_attempts = $3, probe_interval_seconds = $4 WHERE id = $1", [
    id,
    windowSeconds,
    minAttempts,
    probeIntervalSeconds,
  ]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  rx = await startReceiver((_req, res) => {
    res.statusCode = status;
    res.end();
  });
  ({
    secrets: [secret],
  } = await createSub(db.pool, { id: "sub_fw", url: rx.url, retryPolicy: FAST_RETRIES, maxConcurrency: 1 }));
  await shortWindow("sub_fw");
  await createSub(db.pool, { id: "sub_fw_off", url: rx.url, retryPolicy: FAST_RETRIES, maxConcurrency: 1 });
  await db.pool.query("UPDATE subscriptions SET failure_window_seconds = NULL, failure_min_attempts = NULL, probe_interval_seconds = NULL WHERE id = 'sub_fw_off'");
  // Anyone listening for the pause and the recovery.
  await createSub(db.pool, {
    id: "sub_oncall",
    url: "http://127.0.0.1:9/oncall",
    eventTypes: ["hookledger.subscription.paused", "hookledger.subscription.recovered"],
    state: "paused",
  });
  w = worker(db.url);
}, 60_000);

afterAll(async () => {
  await w?.stop();
  await rx?.close();
  await db?.close();
});

describe("a 503-forever endpoint with a 2 s window, 3 attempts", () => {
  let pausedRow: { xmin: string; paused_at: Date; failing_attempts: number };

  it("is paused for failing by the result write that tripped it, with the audit row and the operational event in that transaction", async () => {
    // Three events, one at a time so their created order is strict.
    for (let i = 1; i <= 3; i++) await seedEvents(db.pool, `evt_fw_old${i}_`, 1, ["sub_fw"]);
    pausedRow = await waitFor(
      async () => {
        const { rows } = await db.pool.query(
          "SELECT xmin::text AS xmin, state, paused_reason, paused_at, failing_since, failing_attempts, next_probe_at FROM subscriptions WHERE id = 'sub_fw'",
        );
        return rows[0].state === "paused" ? rows[0] : null;
      },
      30_000,
      "sub_fw to be paused",
    );
    const s = await sub("sub_fw");
    expect(s.paused_reason).toBe("failing");
    expect(s.state_reason).toMatch(/^every attempt since .* UTC failed \(\d+ attempts\); the endpoint is probed until it answers 2xx$/);
    expect(pausedRow.failing_attempts).toBeGreaterThanOrEqual(3);
    // The window held: the run began at least 2 s before the pause.
    expect(s.paused_at.getTime() - s.failing_since.getTime()).toBeGreaterThanOrEqual(2000);

    // Same transaction: the attempt that tripped it, the audit row and the event share the row's xmin.
    const tx = pausedRow.xmin;
    const att = await db.pool.query("SELECT outcome, status_code FROM attempts WHERE subscription_id = 'sub_fw' AND xmin::text = $1", [tx]);
    expect(att.rows.length).toBeGreaterThanOrEqual(1);
    expect(att.rows[0].status_code).toBe(503);
    const aud = await db.pool.query("SELECT actor, action, reason, details FROM audit_entries WHERE target_id = 'sub_fw' AND xmin::text = $1", [tx]);
    expect(aud.rows).toEqual([
      expect.objectContaining({
        actor: "system",
        action: "subscription.pause",
        details: { from: "active", to: "paused" },
        reason: expect.stringMatching(/paused for failing/),
      }),
    ]);
    const ev = await db.pool.query<{ payload: Buffer }>("SELECT payload FROM events WHERE type = 'hookledger.subscription.paused' AND xmin::text = $1", [tx]);
    expect(ev.rows).toHaveLength(1);
    const data = JSON.parse(ev.rows[0].payload.toString("utf8")).data;
    expect(data).toMatchObject({ subscriptionId: "sub_fw", reason: "failing", failedAttempts: pausedRow.failing_attempts });
    // Delivered to the on-call subscription (held there: it is paused by hand).
    const oncall = await db.pool.query("SELECT state FROM deliveries WHERE subscription_id = 'sub_oncall' AND event_type = 'hookledger.subscription.paused'");
    expect(oncall.rows).toEqual([{ state: "pending" }]);
  });

  it("holds its deliveries: new ones are not attempted, none is dead-lettered; probes get the 503 and are recorded", async () => {
    for (let i = 1; i <= 2; i++) await seedEvents(db.pool, `evt_fw_new${i}_`, 1, ["sub_fw"]);
    const keysNew = [1, 2].map((i) => deliveryKey("sub_fw", `evt_fw_new${i}_1`));
    // Probes run every second at first: wait for two.
    const s = await waitFor(
      async () => {
        const r = await sub("sub_fw");
        return r.probe_count >= 2 ? r : null;
      },
      15_000,
      "two probes",
    );
    expect(s.state).toBe("paused");
    expect(s.last_probe_status).toBe(503);
    expect(s.last_probe_error).toBe("HTTP 503");
    expect(s.last_probe_latency_ms).toEqual(expect.any(Number));
    expect(s.last_probe_at).toBeInstanceOf(Date);
    expect(s.next_probe_at.getTime()).toBeGreaterThan(s.last_probe_at.getTime());
    for (const k of keysNew) expect(rx.count(k)).toBe(0);
    const held = await db.pool.query("SELECT state, attempt_count FROM deliveries WHERE subscription_id = 'sub_fw' ORDER BY created_at");
    expect(held.rows).toHaveLength(5);
    for (const d of held.rows) expect(["pending", "scheduled"]).toContain(d.state);
    expect(held.rows.slice(3).every((d) => d.attempt_count === 0)).toBe(true);
    // No attempt started after the pause: the row the pausing cycle claimed for it was put back unsent.
    const after = await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = 'sub_fw' AND started_at > $1", [pausedRow.paused_at]);
    expect(after.rows[0].n).toBe(0);

    // The probe is a signed hookledger.ping, not one of the held deliveries.
    const probes = rx.received.filter((r) => r.id.startsWith("probe_"));
    expect(probes.length).toBeGreaterThanOrEqual(2);
    const body = new Webhook(secret).verify(probes[0].body.toString("utf8"), {
      "webhook-id": probes[0].id,
      "webhook-timestamp": String(probes[0].headers["webhook-timestamp"]),
      "webhook-signature": String(probes[0].headers["webhook-signature"]),
    }) as { type: string; data: { subscriptionId: string; purpose: string } };
    expect(body.type).toBe("hookledger.ping");
    expect(body.data).toMatchObject({ subscriptionId: "sub_fw", purpose: "probe" });
  });

  it("resumes on the first 2xx probe; the held deliveries go out in created order with their original keys", async () => {
    const mark = rx.received.length;
    status = 200;
    await waitFor(async () => ((await sub("sub_fw")).state === "active" ? true : null), 15_000, "sub_fw to be resumed by a probe");
    const s = await sub("sub_fw");
    expect(s).toMatchObject({
      paused_reason: null,
      paused_at: null,
      failing_since: null,
      failing_attempts: 0,
      next_probe_at: null,
      last_probe_status: 200,
      state_reason: null,
    });
    const aud = await db.pool.query("SELECT actor, reason, details FROM audit_entries WHERE target_id = 'sub_fw' AND action = 'subscription.resume'");
    expect(aud.rows).toEqual([
      expect.objectContaining({ actor: "system", details: { from: "paused", to: "active" }, reason: expect.stringMatching(/probe was answered 200/) }),
    ]);
    const ev = await db.pool.query<{ payload: Buffer }>("SELECT payload FROM events WHERE type = 'hookledger.subscription.recovered'");
    expect(ev.rows).toHaveLength(1);
    expect(JSON.parse(ev.rows[0].payload.toString("utf8")).data).toMatchObject({ subscriptionId: "sub_fw", deliveryId: null, probe: { status: 200 } });

    const order = ["old1", "old2", "old3", "new1", "new2"].map((n) => deliveryKey("sub_fw", `evt_fw_${n}_1`));
    await waitFor(
      async () => {
        const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_fw' AND state = 'delivered'");
        return rows[0].n === 5;
      },
      20_000,
      "the held deliveries to drain",
    );
    const sent = rx.received
      .slice(mark)
      .filter((r) => !r.id.startsWith("probe_"))
      .map((r) => r.id);
    expect(sent).toEqual(order);
    for (const n of ["old1", "new2"]) expect((await deliveryOf(db.pool, "sub_fw", `evt_fw_${n}_1`)).state).toBe("delivered");
    const dl = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_fw' AND state = 'dead_letter'");
    expect(dl.rows[0].n).toBe(0);
  });

  it("a manual pause says manual; a resume by hand clears the reason", async () => {
    const paused = await updateSubscription(db.prisma, "sub_fw", { state: "paused", reason: "district maintenance" }, SYSTEM);
    expect(paused).toMatchObject({ state: "paused", pausedReason: "manual", pausedAt: expect.any(String) });
    // The subscriptions list tells an operator's pause from the failure window's.
    expect((await findSubscriptionHealth({ ids: ["sub_fw"] }, db.pool))[0].pausedReason).toBe("manual");
    const resumed = await updateSubscription(db.prisma, "sub_fw", { state: "active" }, SYSTEM);
    expect(resumed).toMatchObject({ state: "active", pausedReason: null, pausedAt: null });
    expect((await sub("sub_fw")).paused_reason).toBeNull();
  });
});

it("a resume by hand of a subscription paused for failing clears the reason, the failure run and the probes", async () => {
  await db.pool.query(
    "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), failing_since = now() - interval '1 day', failing_attempts = 40, next_probe_at = now() + interval '1 hour' WHERE id = 'sub_fw'",
  );
  expect((await findSubscriptionHealth({ ids: ["sub_fw"] }, db.pool))[0]).toMatchObject({ state: "paused", pausedReason: "failing" });
  expect(await updateSubscription(db.prisma, "sub_fw", { state: "active" }, SYSTEM)).toMatchObject({
    state: "active",
    pausedReason: null,
    pausedAt: null,
    health: { failingSince: null, failedAttempts: 0, nextProbeAt: null },
  });
  expect((await findSubscriptionHealth({ ids: ["sub_fw"] }, db.pool))[0].pausedReason).toBeNull();
  const s = await sub("sub_fw");
  expect(s).toMatchObject({ paused_reason: null, failing_since: null, failing_attempts: 0, next_probe_at: null });
});

it("failurePolicy null never pauses, and keeps no failure run", async () => {
  status = 503;
  await seedEvents(db.pool, "evt_fw_off_", 2, ["sub_fw_off"]);
  await waitFor(
    async () => {
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = 'sub_fw_off'");
      return rows[0].n >= 8;
    },
    30_000,
    "eight failed attempts",
  );
  const s = await sub("sub_fw_off");
  expect(s).toMatchObject({ state: "active", paused_reason: null, failing_attempts: 0, failing_since: null });
});
