// Health that tells the truth now: a subscription whose newest attempts all
// failed (three in a row, or every one for five minutes) is failing since the first
// failure of that run (the failure window's start when it keeps one), with the
// last answer's time and whole excerpt; one or two failures among steady
// successes are not an outage. Read for a page's subscriptions only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription, type SeedAttempt } from "../helpers/dashboard-seed";
import { findSubscriptionHealth, findSubscriptionHealthPage } from "../../lib/dashboard/subscriptions";

let db: TestDb;
const now = Date.now();
const at = (m: number) => minutesAgo(m, now);
const down = (m: number, excerpt = "Service Unavailable"): SeedAttempt => ({ at: at(m), outcome: "retry", status: 503, errorClass: "http_5xx", excerpt });
const ok = (m: number): SeedAttempt => ({ at: at(m), outcome: "delivered", status: 200 });
const westfield =
  "This endpoint was decommissioned on 2026-06-30. Send grades to https://sis.westfield.example/v2/hooks instead; this one answers 410 from 2026-07-01 on.";

let n = 0;
async function attempts(subscriptionId: string, list: SeedAttempt[]) {
  // One delivery an attempt, so each attempt's time is its own (a delivery's attempts are one run of retries).
  for (const a of list) {
    const eventId = `evt_fs_${n++}`;
    await seedEvent(db.pool, { id: eventId, subject: { tenant: "lincoln" } });
    await seedDelivery(db.pool, { subscriptionId, eventId, state: a.outcome === "delivered" ? "delivered" : "scheduled", attempts: [a] });
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const [id, name] of [
    ["sub_down", "A Down"],
    ["sub_blip", "B Blip"],
    ["sub_ok", "C Healthy"],
    ["sub_kept", "D Kept run"],
    ["sub_gone", "E Westfield"],
    ["sub_outage", "F Outage"],
  ])
    await seedSubscription(db.pool, { id, name, tenant: "lincoln" });
  await attempts("sub_down", [ok(20), down(12), down(8), down(3), down(1)]);
  await attempts("sub_blip", [ok(30), ok(4), down(2), down(1)]);
  // An outage that began a minute ago, right after a success: three failures in a row.
  await attempts("sub_outage", [ok(1.5), down(1), down(0.6), down(0.3)]);
  await attempts("sub_ok", [ok(10), ok(2)]);
  await attempts("sub_kept", [down(30), down(2)]);
  // The failure window keeps the run's start beyond what the list reads (the policy is on for this one).
  await db.pool.query("UPDATE subscriptions SET failing_since = $1, failing_attempts = 41 WHERE id = 'sub_kept'", [at(120)]);
  await attempts("sub_gone", [ok(90), { at: at(40), outcome: "dead_letter", status: 410, errorClass: "http_410", excerpt: westfield }]);
}, 120_000);
afterAll(async () => db?.close());

describe("failing since", () => {
  it("the newest attempts all failed and nothing succeeded for five minutes: failing since the run's first failure, with the last answer", async () => {
    const [s] = await findSubscriptionHealth({ ids: ["sub_down"], now: new Date(now) });
    expect(s.failing).toEqual({ since: at(12).toISOString(), attempts: 4 });
    expect(s.lastError).toMatchObject({ at: at(1).toISOString(), statusCode: 503, excerpt: "Service Unavailable" });
  });

  it("two failures after a success a few minutes ago are not an outage; a healthy endpoint is not failing", async () => {
    const rows = await findSubscriptionHealth({ ids: ["sub_blip", "sub_ok"], now: new Date(now) });
    expect(rows.map((r) => [r.id, r.failing])).toEqual([
      ["sub_blip", null],
      ["sub_ok", null],
    ]);
    expect(rows[0].lastError?.statusCode).toBe(503);
    expect(rows[1].lastError).toBeNull();
  });

  it("three failures in a row are, however recent the last success", async () => {
    const [s] = await findSubscriptionHealth({ ids: ["sub_outage"], now: new Date(now) });
    expect(s.failing).toEqual({ since: at(1).toISOString(), attempts: 3 });
  });

  it("the failure window's run, when kept, dates it (beyond the attempts the list reads)", async () => {
    const [s] = await findSubscriptionHealth({ ids: ["sub_kept"], now: new Date(now) });
    expect(s.failing).toEqual({ since: at(120).toISOString(), attempts: 41 });
  });

  it("the last answer is the stored excerpt whole, not cut before it names the new endpoint", async () => {
    const [s] = await findSubscriptionHealth({ ids: ["sub_gone"], now: new Date(now) });
    expect(s.lastError?.excerpt).toBe(westfield);
    expect(s.failing).toEqual({ since: at(40).toISOString(), attempts: 1 });
  });

  it("the list page computes it for the page's rows, and it ends with the first success", async () => {
    const page = await findSubscriptionHealthPage({ sort: "name", limit: 2, now: new Date(now) });
    expect(page.items.map((s) => [s.id, Boolean(s.failing)])).toEqual([
      ["sub_down", true],
      ["sub_blip", false],
    ]);
    await attempts("sub_down", [ok(0.5)]);
    const [after] = await findSubscriptionHealth({ ids: ["sub_down"], now: new Date(now) });
    expect(after.failing).toBeNull();
  });
});

describe("failing since, after the endpoint answered a check", () => {
  it("says when a probe was answered with a 2xx after the newest failure, and nothing for an older or a failed probe", async () => {
    await seedSubscription(db.pool, { id: "sub_probed", name: "G Probed", tenant: "lincoln" });
    await attempts("sub_probed", [down(12), down(8), down(3), down(1)]);
    await db.pool.query("UPDATE subscriptions SET last_probe_at = $1, last_probe_status = 200 WHERE id = 'sub_probed'", [at(0.5)]);
    const [s] = await findSubscriptionHealth({ ids: ["sub_probed"], now: new Date(now) });
    expect(s.failing).not.toBeNull();
    expect(s.answeredCheckAt).toBe(at(0.5).toISOString());
    // The page the list reads answers the same.
    const page = await findSubscriptionHealthPage({ sort: "name", limit: 50, now: new Date(now) });
    expect(page.items.find((r) => r.id === "sub_probed")?.answeredCheckAt).toBe(at(0.5).toISOString());

    await db.pool.query("UPDATE subscriptions SET last_probe_at = $1, last_probe_status = 200 WHERE id = 'sub_probed'", [at(5)]);
    expect((await findSubscriptionHealth({ ids: ["sub_probed"], now: new Date(now) }))[0].answeredCheckAt).toBeNull();
    await db.pool.query("UPDATE subscriptions SET last_probe_at = $1, last_probe_status = 503 WHERE id = 'sub_probed'", [at(0.5)]);
    expect((await findSubscriptionHealth({ ids: ["sub_probed"], now: new Date(now) }))[0].answeredCheckAt).toBeNull();
    await db.pool.query("UPDATE subscriptions SET last_probe_at = NULL, last_probe_status = NULL WHERE id = 'sub_probed'");
  });
});
