// The DLQ counts are true the moment after a write: GET /api/v1/dlq, through
// the real route handler, and a subscription's dead-letter count show a bulk
// resolve, a redrive and a new dead letter at once, while the sampler's latest
// reading is fresh and says otherwise (the sampler does not run in between:
// the test checks that its newest sample is the one taken before the write).
// A scoped principal's counts stay its tenant's. The sampler still records
// the history the charts and alerts read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { seedSubscription } from "../helpers/dashboard-seed";
import { seedDeadLetters } from "../helpers/redrive-helpers";
import { delivered } from "../helpers/worker-helpers";
import * as dlq from "../../app/api/v1/dlq/route";
import * as resolveBulk from "../../app/api/v1/dlq/resolve/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as subOverview from "../../app/api/v1/dashboard/subscriptions/[id]/route";
import * as subList from "../../app/api/v1/dashboard/subscriptions/route";
import { createApiToken } from "../../lib/auth/tokens";
import { sampleDlq } from "../../lib/rollups/sampler";
import { getDlqSummary } from "../../lib/dashboard/dead-letters";
import { seedEventsFanOut } from "../../lib/ledger/sql/seed";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { writeResults } from "../../lib/ledger/sql/write-results";
import { scopeOf } from "../../lib/tenants/scope";

let db: TestDb;
let engineer: string;
let support: string;
let lincolnSupport: string;
const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
const ids: Record<string, string[]> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  engineer = (await createApiToken(db.prisma, { role: "engineer", name: "eng" })).token;
  support = (await createApiToken(db.prisma, { role: "support", name: "support" })).token;
  lincolnSupport = (await createApiToken(db.prisma, { role: "support", name: "lincoln-support", tenantId: "lincoln" })).token;
  await seedSubscription(db.pool, { id: "sub_linc", name: "Lincoln SIS", tenant: "lincoln" });
  await seedSubscription(db.pool, { id: "sub_jeff", name: "Jefferson SIS", tenant: "jefferson" });
  const jeff = (i: number) => ({ tenant: "jefferson", studentId: `stu_j${i}` });
  ids.gone = await seedDeadLetters(db, { subscriptionId: "sub_jeff", n: 6, prefix: "evt_gone_", reason: "gone", statusCode: 410, at: ago(180), subject: jeff });
  ids.perm = await seedDeadLetters(db, { subscriptionId: "sub_jeff", n: 2, prefix: "evt_perm_", reason: "permanent", statusCode: 422, at: ago(30), subject: jeff });
  ids.linc = await seedDeadLetters(db, {
    subscriptionId: "sub_linc",
    n: 3,
    prefix: "evt_linc_",
    reason: "exhausted",
    statusCode: 503,
    errorClass: "http_5xx",
    at: ago(120),
  });
});
afterAll(async () => db?.close());

const dlqNow = async (token: string, query = "") => {
  const r = await call(dlq.GET, { token, path: `/api/v1/dlq${query}` });
  expect(r.status, r.text).toBe(200);
  return r.json;
};
const depthOf = (j: { bySubscription: { subscriptionId: string; depth: number }[] }, sub: string) => j.bySubscription.find((s) => s.subscriptionId === sub)?.depth ?? 0;
const ageOf = (j: { bySubscription: { subscriptionId: string; oldestAgeSeconds: number }[] }, sub: string) =>
  j.bySubscription.find((s) => s.subscriptionId === sub)?.oldestAgeSeconds;
const latestSample = async () => (await db.pool.query("SELECT max(sampled_at) AS at, (array_agg(depth ORDER BY sampled_at DESC))[1] AS depth FROM dlq_samples")).rows[0];

/** A fresh sample, as the dashboard's sampler leaves one every 15 s: what today's answer must not lag behind. */
async function sampleNow(depth: number) {
  expect(await sampleDlq(db.pool, { minGapMs: 0 })).toEqual({ sampled: true, depth });
  return (await latestSample()).at as Date;
}

describe("GET /api/v1/dlq counts the DLQ now", () => {
  it("a bulk resolve leaves the depth, the oldest age and the groups at once, though the sampler's fresh reading still counts it", async () => {
    const sampledAt = await sampleNow(11);
    const before = await dlqNow(support);
    expect(before.depth).toBe(11);
    expect(depthOf(before, "sub_jeff")).toBe(8);
    expect(ageOf(before, "sub_jeff")).toBeGreaterThanOrEqual(180 * 60 - 5);

    const r = await call(resolveBulk.POST, {
      token: engineer,
      body: { filter: { subscriptionId: "sub_jeff", deadLetterReason: "gone" }, resolution: "discarded", reason: "Jefferson retired the endpoint, INC-35" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.resolved).toBe(6);

    const after = await dlqNow(support);
    // The sampler has not run since: its newest reading still holds the 6.
    expect(await latestSample()).toEqual({ at: sampledAt, depth: 11 });
    expect(after.depth).toBe(5);
    expect(depthOf(after, "sub_jeff")).toBe(2);
    expect(after.groupsSampledAt).toBeNull();
    // The oldest of Jefferson's is now the 30-minute-old permanent letter, and the whole DLQ's Lincoln's 2-hour one.
    expect(ageOf(after, "sub_jeff")).toBeGreaterThanOrEqual(30 * 60 - 5);
    expect(ageOf(after, "sub_jeff")).toBeLessThan(35 * 60);
    expect(after.oldestAgeSeconds).toBeGreaterThanOrEqual(120 * 60 - 5);
    expect(after.oldestAgeSeconds).toBeLessThan(125 * 60);
    expect(after.byReason.map((x: { reason: string }) => x.reason).sort()).toEqual(["exhausted", "permanent"]);
    expect(after.bySubscriptionAndReason).toEqual(
      expect.arrayContaining([
        { subscriptionId: "sub_jeff", reason: "permanent", depth: 2, oldestAgeSeconds: expect.any(Number) },
        { subscriptionId: "sub_linc", reason: "exhausted", depth: 3, oldestAgeSeconds: expect.any(Number) },
      ]),
    );
    expect(after.bySubscriptionAndReason).toHaveLength(2);
    expect(
      after.groups.map((g: { subscriptionId: string; reason: string; statusCode: number; depth: number; sampledAt: string | null }) => [
        g.subscriptionId,
        g.reason,
        g.statusCode,
        g.depth,
        g.sampledAt,
      ]),
    ).toEqual([
      ["sub_linc", "exhausted", 503, 3, null],
      ["sub_jeff", "permanent", 422, 2, null],
    ]);

    // The subscription's own dead-letter count (its page, the list): the trigger-kept counters, current as well.
    const o = await call(subOverview.GET, { token: support, path: "/api/v1/dashboard/subscriptions/sub_jeff?range=1h", params: { id: "sub_jeff" } });
    expect(o.status, o.text).toBe(200);
    expect(o.json.counts.deadLetter).toBe(2);
    expect(Date.now() - Date.parse(o.json.dlqOldestAt)).toBeLessThan(35 * 60_000);
    const list = await call(subList.GET, { token: support, path: "/api/v1/dashboard/subscriptions" });
    expect(list.json.items.find((s: { id: string }) => s.id === "sub_jeff").counts.deadLetter).toBe(2);
  });

  it("a redrive takes the dead letter out at once", async () => {
    const sampledAt = await sampleNow(5);
    const r = await call(redriveOne.POST, { token: engineer, params: { id: ids.linc[0] }, body: { reason: "endpoint fixed, INC-36" } });
    expect(r.status, r.text).toBe(200);
    const after = await dlqNow(support);
    expect((await latestSample()).at).toEqual(sampledAt);
    expect(after.depth).toBe(4);
    expect(depthOf(after, "sub_linc")).toBe(2);
    expect(after.groups.find((g: { subscriptionId: string }) => g.subscriptionId === "sub_linc").depth).toBe(2);
    const o = await call(subOverview.GET, { token: support, path: "/api/v1/dashboard/subscriptions/sub_linc?range=1h", params: { id: "sub_linc" } });
    expect(o.json.counts.deadLetter).toBe(2);
  });

  it("a new dead letter, written by the worker's result write, counts at once, with its age", async () => {
    const sampledAt = await sampleNow(4);
    await seedEventsFanOut(db.pool, "evt_new_", 1, ["sub_linc"], "lincoln");
    const claimed = (await claimDeliveries(db.pool, { owner: "w1", limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [] })).filter(
      (c) => c.subscriptionId === "sub_linc",
    );
    expect(claimed).toHaveLength(2); // the redriven letter and the new event
    const fresh = claimed.find((c) => c.id !== ids.linc[0])!;
    const written = await writeResults(db.pool, "w1", [
      { ...delivered(fresh), state: "dead_letter", statusCode: 422, errorClass: "http_4xx", errorMessage: "missing field term_id", deadLetterReason: "permanent" },
    ]);
    expect(written.map((w) => w.id)).toEqual([fresh.id]);
    const after = await dlqNow(support);
    expect((await latestSample()).at).toEqual(sampledAt);
    expect(after.depth).toBe(5);
    expect(depthOf(after, "sub_linc")).toBe(3);
    expect(
      after.bySubscriptionAndReason.find((p: { subscriptionId: string; reason: string }) => p.subscriptionId === "sub_linc" && p.reason === "permanent"),
    ).toMatchObject({
      depth: 1,
      oldestAgeSeconds: expect.any(Number),
    });
    expect(
      after.bySubscriptionAndReason.find((p: { subscriptionId: string; reason: string }) => p.subscriptionId === "sub_linc" && p.reason === "permanent").oldestAgeSeconds,
    ).toBeLessThan(60);
    expect(after.groups).toEqual(
      expect.arrayContaining([expect.objectContaining({ subscriptionId: "sub_linc", reason: "permanent", statusCode: 422, depth: 1, sampledAt: null })]),
    );
  });

  it("a tenant's principal counts its own tenant's dead letters only, now, and another tenant's resolve does not move them", async () => {
    const mine = await dlqNow(lincolnSupport);
    expect(mine.depth).toBe(3);
    expect(mine.bySubscription.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual(["sub_linc"]);
    expect(new Set(mine.groups.map((g: { subscriptionId: string }) => g.subscriptionId))).toEqual(new Set(["sub_linc"]));
    expect(mine.bySubscriptionAndReason.every((p: { subscriptionId: string }) => p.subscriptionId === "sub_linc")).toBe(true);
    const theirs = await dlqNow(lincolnSupport, "?subscriptionId=sub_jeff");
    expect(theirs).toMatchObject({ depth: 0, oldestAgeSeconds: null, bySubscription: [], byReason: [], bySubscriptionAndReason: [], groups: [] });

    const r = await call(resolveBulk.POST, { token: engineer, body: { filter: { subscriptionId: "sub_jeff" }, resolution: "superseded", reason: "replaced, INC-37" } });
    expect(r.json.resolved).toBe(2);
    expect((await dlqNow(lincolnSupport)).depth).toBe(3);
    expect((await dlqNow(support)).depth).toBe(3);
    expect(depthOf(await dlqNow(support), "sub_jeff")).toBe(0);
  });

  it("past the live budget a subscription's groups are the sample's, marked so, and a pair emptied since the sample has none", async () => {
    await seedDeadLetters(db, { subscriptionId: "sub_jeff", n: 4, prefix: "evt_more_", reason: "permanent", statusCode: 400, at: ago(10) });
    await seedDeadLetters(db, { subscriptionId: "sub_jeff", n: 2, prefix: "evt_gone2_", reason: "gone", statusCode: 410, at: ago(10) });
    const sampledAt = await sampleNow(9);
    // Lincoln's 3 fit in a budget of 4; Jefferson's 6 do not.
    const s1 = await getDlqSummary({ liveGroupLimit: 4 });
    expect(s1).toMatchObject({ depth: 9, groupsSampledAt: sampledAt.toISOString() });
    expect(s1.groups.filter((g) => g.subscriptionId === "sub_linc").every((g) => g.sampledAt === null)).toBe(true);
    expect(s1.groups.filter((g) => g.subscriptionId === "sub_jeff").map((g) => [g.reason, g.depth, g.sampledAt])).toEqual([
      ["permanent", 4, sampledAt.toISOString()],
      ["gone", 2, sampledAt.toISOString()],
    ]);
    await call(resolveBulk.POST, {
      token: engineer,
      body: { filter: { subscriptionId: "sub_jeff", deadLetterReason: "gone" }, resolution: "discarded", reason: "INC-38" },
    });
    const s2 = await getDlqSummary({ liveGroupLimit: 4 });
    expect(s2.depth).toBe(7);
    expect(s2.groups.filter((g) => g.subscriptionId === "sub_jeff").map((g) => [g.reason, g.depth])).toEqual([["permanent", 4]]);
    // Without a fresh sample (the sampler stopped) the large subscription's rows are read too, whatever it costs.
    const stale = await getDlqSummary({ liveGroupLimit: 4, now: new Date(Date.now() + 3 * 60_000) });
    expect(stale).toMatchObject({ depth: 7, groupsSampledAt: null });
    expect(stale.groups.every((g) => g.sampledAt === null)).toBe(true);
    expect(stale.groups.filter((g) => g.subscriptionId === "sub_jeff").map((g) => [g.reason, g.statusCode, g.depth])).toEqual([["permanent", 400, 4]]);
    // Scoped, with the same budget: Jefferson's groups never reach Lincoln.
    const scoped = await getDlqSummary({ liveGroupLimit: 4, scope: scopeOf({ tenantId: "lincoln" }) });
    expect(scoped).toMatchObject({ depth: 3, groupsSampledAt: null });
  });

  it("?limit= and ?q= list the deepest subscriptions, or those whose id, name or tenant matches; the totals stay whole", async () => {
    const all = await dlqNow(support);
    const deepest = all.bySubscription[0].subscriptionId;
    const other = all.bySubscription[1].subscriptionId;
    const top = await dlqNow(support, "?limit=1");
    expect(top).toMatchObject({ depth: all.depth, oldestAgeSeconds: all.oldestAgeSeconds, byReason: all.byReason, subscriptionCount: 2, matchingSubscriptionCount: 2 });
    expect(top.bySubscription.map((r: { subscriptionId: string }) => r.subscriptionId)).toEqual([deepest]);
    expect(top.groups.length).toBeGreaterThan(0);
    expect([...top.groups, ...top.bySubscriptionAndReason].every((r: { subscriptionId: string }) => r.subscriptionId === deepest)).toBe(true);
    // A tenant's id, any case; then a name; the one asked for by the filter is listed whatever its rank.
    const byTenant = await dlqNow(support, "?q=LINCOLN&limit=50");
    expect(byTenant).toMatchObject({ depth: all.depth, subscriptionCount: 2, matchingSubscriptionCount: 1 });
    expect(byTenant.bySubscription.map((r: { subscriptionId: string }) => r.subscriptionId)).toEqual(["sub_linc"]);
    expect((await dlqNow(support, "?q=jefferson%20sis")).bySubscription.map((r: { subscriptionId: string }) => r.subscriptionId)).toEqual(["sub_jeff"]);
    const included = await dlqNow(support, `?limit=1&include=${other}`);
    expect(included.bySubscription.map((r: { subscriptionId: string }) => r.subscriptionId)).toEqual([deepest, other]);
    // Scoped: the other district's subscriptions are neither listed nor counted.
    expect(await dlqNow(lincolnSupport, "?q=jefferson&limit=50")).toMatchObject({ subscriptionCount: 1, matchingSubscriptionCount: 0, bySubscription: [] });
    expect((await call(dlq.GET, { token: support, path: "/api/v1/dlq?limit=0" })).status).toBe(400);
  });

  it("the sampler still records the history, and its reading agrees with the count", async () => {
    const now = await dlqNow(support);
    expect(await sampleDlq(db.pool, { minGapMs: 0 })).toEqual({ sampled: true, depth: now.depth });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM dlq_samples");
    expect(rows[0].n).toBeGreaterThanOrEqual(5);
  });
});
