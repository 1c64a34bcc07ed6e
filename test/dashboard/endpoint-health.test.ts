// A subscription's page says what its last delivery attempts did twice: "Failing
// since …" in the header and a line in the Endpoint health card. Both come from
// the overview (`failing`, `lastAttempts`: one read of the attempts), so they
// agree; the failure window's run on the subscription row (the API's
// health.failedAttempts) is a different thing, kept only while the policy is on,
// restarted by a resume, not counted on a 410, and is no longer read as "the
// last attempt succeeded". Real traffic: a real receiver, an in-process worker,
// through the sequences where the window's run and the attempts part ways.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { getSubscriptionOverview, type SubscriptionHealth } from "../../lib/dashboard/subscriptions";
import { getSubscription, updateSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { sendTest } from "../../lib/net/test-send";
import { redriveDelivery } from "../../lib/redrive/redrive-batches";
import { SYSTEM } from "../../lib/auth/principal";
import type { DeliveryWorker } from "../../worker/worker";

let db: TestDb;
let rx: Receiver;
let w: DeliveryWorker;
/** What each subscription's endpoint answers its deliveries; probes and test sends get `pingStatus`. */
const answers = new Map<string, number>();
let pingStatus = 200;

const FAST_RETRIES = { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 };

/** A policy below the API's bounds (a window of 2 s), set as the tests may: straight on the row. */
async function shortWindow(id: string) {
  await db.pool.query("UPDATE subscriptions SET failure_window_seconds = 2, failure_min_attempts = 3, probe_interval_seconds = 1 WHERE id = $1", [id]);
}

async function failedAttempts(id: string): Promise<number> {
  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = $1 AND outcome <> 'delivered'", [id]);
  return rows[0].n;
}

async function firstAttemptAt(id: string): Promise<string> {
  const { rows } = await db.pool.query("SELECT min(started_at) AS at FROM attempts WHERE subscription_id = $1", [id]);
  return rows[0].at.toISOString();
}

/** The header's figures and the card's, read as the page reads them; they must say the same. */
async function page(id: string, now?: Date): Promise<SubscriptionHealth> {
  const o = await getSubscriptionOverview({ id, now }, db.pool);
  if (o.failing) expect(o.lastAttempts).toMatchObject({ failed: o.failing.attempts, failedSince: o.failing.since });
  return o;
}

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  rx = await startReceiver((req, res, r) => {
    const sub = String(req.url).split("/").pop()!;
    const ping = r.id.startsWith("probe_") || req.headers["hookledger-test"] === "1";
    res.statusCode = ping ? pingStatus : (answers.get(sub) ?? 204);
    res.end();
  });
  w = worker(db.url);
}, 60_000);

afterAll(async () => {
  await w?.stop();
  await rx?.close();
  await db?.close();
});

describe("the header and the card agree on the last delivery attempts", () => {
  it("with the failure window off: failing, and a test send answered 200 changes neither", async () => {
    await createSub(db.pool, { id: "sub_off", url: `${rx.url}/sub_off`, retryPolicy: FAST_RETRIES, maxConcurrency: 1 });
    await db.pool.query("UPDATE subscriptions SET failure_window_seconds = NULL, failure_min_attempts = NULL, probe_interval_seconds = NULL WHERE id = 'sub_off'");
    answers.set("sub_off", 503);
    await seedEvents(db.pool, "evt_off_", 1, ["sub_off"]);
    await waitFor(async () => (await failedAttempts("sub_off")) >= 3, 30_000, "three failed attempts");
    const test = await sendTest(db.prisma, "sub_off", {}, SYSTEM);
    expect(test.status).toBe(200);

    const o = await page("sub_off");
    expect(o.failing).toMatchObject({ since: await firstAttemptAt("sub_off") });
    expect(o.lastAttempts).toMatchObject({ failed: expect.any(Number), deliveredAt: null });
    expect(o.lastAttempts.failed).toBeGreaterThanOrEqual(3);
    // The window keeps no run with its policy off: what the card used to read as "the last attempt succeeded".
    expect((await getSubscription(db.prisma, "sub_off")).health).toMatchObject({ failingSince: null, failedAttempts: 0 });
  });

  it("paused for failing, then resumed by a probe's 2xx with nothing held: the deliveries' failures still stand, until one is delivered", async () => {
    // One attempt a delivery: each failure dead-letters it, so nothing is held when the probe resumes the subscription.
    await createSub(db.pool, { id: "sub_probe", url: `${rx.url}/sub_probe`, retryPolicy: { maxAttempts: 1 }, maxConcurrency: 1 });
    await shortWindow("sub_probe");
    answers.set("sub_probe", 500);
    pingStatus = 200;
    for (let i = 0; i < 3; i++) {
      await seedEvents(db.pool, `evt_probe${i}_`, 1, ["sub_probe"]);
      await waitFor(async () => (await failedAttempts("sub_probe")) > i, 10_000, `failed attempt ${i + 1}`);
      await new Promise((r) => setTimeout(r, 1100));
    }
    await waitFor(
      async () => {
        const s = await getSubscription(db.prisma, "sub_probe");
        return s.state === "active" && s.health.lastProbe?.status === 200;
      },
      30_000,
      "a pause for failing, then a probe's 200",
    );
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries WHERE target_id = 'sub_probe' AND action = 'subscription.pause'")).rows[0].n).toBe(1);
    expect((await getSubscription(db.prisma, "sub_probe")).health).toMatchObject({ failingSince: null, failedAttempts: 0 });

    const o = await page("sub_probe");
    expect(o.failing).toEqual({ since: await firstAttemptAt("sub_probe"), attempts: 3 });
    expect(o.lastAttempts).toEqual({ failed: 3, failedSince: o.failing!.since, deliveredAt: null });

    // The district fixes what its endpoint does with deliveries; one dead letter is sent again and delivered.
    answers.set("sub_probe", 204);
    const { rows } = await db.pool.query("SELECT id FROM deliveries WHERE subscription_id = 'sub_probe' AND state = 'dead_letter' ORDER BY created_at LIMIT 1");
    await redriveDelivery(db.prisma, { id: rows[0].id, reason: "endpoint fixed", principal: SYSTEM });
    await waitFor(async () => (await page("sub_probe")).lastAttempts.deliveredAt, 15_000, "the redriven delivery to be delivered");
    const after = await page("sub_probe");
    expect(after.failing).toBeNull();
    expect(after.lastAttempts).toMatchObject({ failed: 0, failedSince: null, deliveredAt: expect.any(String) });
  });

  it("paused for failing and resumed by hand while the endpoint still fails: failing since the outage began, not since the resume", async () => {
    await createSub(db.pool, { id: "sub_hand", url: `${rx.url}/sub_hand`, retryPolicy: FAST_RETRIES, maxConcurrency: 1 });
    await shortWindow("sub_hand");
    answers.set("sub_hand", 503);
    pingStatus = 503;
    await seedEvents(db.pool, "evt_hand_", 2, ["sub_hand"]);
    await waitFor(async () => (await getSubscription(db.prisma, "sub_hand")).pausedReason === "failing", 30_000, "a pause for failing");
    const began = await firstAttemptAt("sub_hand");
    const before = await failedAttempts("sub_hand");

    await updateSubscription(db.prisma, "sub_hand", { state: "active" }, SYSTEM);
    const resumed = await page("sub_hand");
    expect(resumed.failing?.since).toBe(began);
    expect(resumed.lastAttempts.failed).toBeGreaterThanOrEqual(before);

    // The held deliveries go out and fail again: the window counts afresh from the resume; the outage is older.
    await waitFor(async () => (await failedAttempts("sub_hand")) > before, 15_000, "a failed attempt after the resume");
    await waitFor(async () => (await getSubscription(db.prisma, "sub_hand")).health.failedAttempts > 0, 15_000, "the window's new run");
    const window = (await getSubscription(db.prisma, "sub_hand")).health;
    expect(window.failingSince! > began).toBe(true);
    const o = await page("sub_hand");
    expect(o.failing?.since).toBe(began);
    expect(o.lastAttempts.failedSince).toBe(began);
  });

  it("disabled by a 410: the window does not count it, the page says the last attempt failed", async () => {
    await createSub(db.pool, { id: "sub_gone", url: `${rx.url}/sub_gone`, retryPolicy: FAST_RETRIES, maxConcurrency: 1 });
    answers.set("sub_gone", 410);
    await seedEvents(db.pool, "evt_gone_", 1, ["sub_gone"]);
    await waitFor(async () => (await getSubscription(db.prisma, "sub_gone")).state === "disabled", 15_000, "disabled on the 410");
    expect((await getSubscription(db.prisma, "sub_gone")).health).toMatchObject({ failingSince: null, failedAttempts: 0 });
    // Straight after, one failure is not yet an outage; the card says it failed all the same.
    expect((await page("sub_gone")).lastAttempts).toEqual({ failed: 1, failedSince: await firstAttemptAt("sub_gone"), deliveredAt: null });
    // Five minutes on with nothing delivered, the header says failing too.
    const later = await page("sub_gone", new Date(Date.now() + 6 * 60_000));
    expect(later.failing).toEqual({ since: await firstAttemptAt("sub_gone"), attempts: 1 });
  });
});
