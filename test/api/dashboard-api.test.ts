// The dashboard's read endpoints through apiRoute: the permission table is
// enforced on the server, bad input is a 400, GET /api/v1/dlq has the
// shape docs/API.md gives it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDelivery, seedEvent, seedSubscription, minutesAgo } from "../helpers/dashboard-seed";
import * as dlq from "../../app/api/v1/dlq/route";
import * as dlqHistory from "../../app/api/v1/dlq/history/route";
import * as lookup from "../../app/api/v1/dashboard/lookup/route";
import * as subs from "../../app/api/v1/dashboard/subscriptions/route";
import * as sub from "../../app/api/v1/dashboard/subscriptions/[id]/route";
import * as subDeliveries from "../../app/api/v1/dashboard/subscriptions/[id]/deliveries/route";
import * as answers from "../../app/api/v1/dashboard/subscriptions/[id]/answers/route";
import * as delivery from "../../app/api/v1/dashboard/deliveries/[id]/route";
import * as batches from "../../app/api/v1/dashboard/redrives/route";
import { createApiToken } from "../../lib/auth/tokens";
import { sampleDlq } from "../../lib/rollups/sampler";

let db: TestDb;
let support: string;
let producer: string;
let dlId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  support = await tokenFor(db.prisma, "support");
  producer = await tokenFor(db.prisma, "producer");
  await seedSubscription(db.pool, { id: "sub_a", name: "Lincoln USD", tenant: "lincoln" });
  await seedEvent(db.pool, { id: "evt_a", subject: { tenant: "lincoln", studentId: "stu_1" } });
  dlId = await seedDelivery(db.pool, {
    subscriptionId: "sub_a",
    eventId: "evt_a",
    state: "dead_letter",
    reason: "exhausted",
    attempts: [{ at: minutesAgo(10), status: 500, errorClass: "http_5xx", outcome: "dead_letter", excerpt: "boom" }],
  });
  await sampleDlq(db.pool, { minGapMs: 0 });
});
afterAll(async () => db?.close());

describe("GET /api/v1/dlq", () => {
  it("answers {depth, oldestAgeSeconds, countedAt, bySubscription, byReason} counted from the ledger", async () => {
    const r = await call(dlq.GET, { token: support, path: "/api/v1/dlq" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      depth: 1,
      oldestAgeSeconds: expect.any(Number),
      countedAt: expect.any(String),
      groupsSampledAt: null,
      bySubscription: [{ subscriptionId: "sub_a", subscriptionName: "Lincoln USD", depth: 1 }],
      byReason: [{ reason: "exhausted", depth: 1 }],
    });
    expect(r.json.oldestAgeSeconds).toBeGreaterThanOrEqual(590);
  });

  it("history, and 400 for a bad range", async () => {
    const h = await call(dlqHistory.GET, { token: support, path: "/api/v1/dlq/history?hours=1" });
    expect(h.status).toBe(200);
    expect(h.json.points).toHaveLength(1);
    expect((await call(dlqHistory.GET, { token: support, path: "/api/v1/dlq/history?hours=9999" })).status).toBe(400);
  });

  it("needs dlq.read: no token 401, producer 403", async () => {
    expect((await call(dlq.GET, { path: "/api/v1/dlq" })).status).toBe(401);
    expect((await call(dlq.GET, { token: producer, path: "/api/v1/dlq" })).status).toBe(403);
  });
});

describe("dashboard read endpoints", () => {
  it("lookup, subscriptions, subscription detail, deliveries, answers, delivery detail", async () => {
    const l = await call(lookup.GET, { token: support, path: "/api/v1/dashboard/lookup?q=stu_1" });
    expect(l.status, l.text).toBe(200);
    expect(l.json.deliveries.map((d: { id: string }) => d.id)).toEqual([dlId]);
    const s = await call(subs.GET, { token: support, path: "/api/v1/dashboard/subscriptions?tenant=lincoln" });
    expect(s.json.items.map((x: { id: string }) => x.id)).toEqual(["sub_a"]);
    const o = await call(sub.GET, { token: support, path: "/api/v1/dashboard/subscriptions/sub_a?range=1h", params: { id: "sub_a" } });
    expect(o.status, o.text).toBe(200);
    expect(o.json.counts.deadLetter).toBe(1);
    const d = await call(subDeliveries.GET, {
      token: support,
      path: "/api/v1/dashboard/subscriptions/sub_a/deliveries?state=dead_letter&statusCode=500",
      params: { id: "sub_a" },
    });
    expect(d.json.items).toHaveLength(1);
    const a = await call(answers.GET, { token: support, path: "/x", params: { id: "sub_a" } });
    expect(a.json.groups[0]).toMatchObject({ statusCode: 500, count: 1, signature: "boom" });
    const one = await call(delivery.GET, { token: support, path: "/x", params: { id: dlId } });
    expect(one.json.requestHeaders).toContainEqual(["webhook-signature", "v1,[redacted]"]);
  });

  it("bad input is 400, unknown ids 404, and every endpoint needs a reader role", async () => {
    expect((await call(lookup.GET, { token: support, path: "/api/v1/dashboard/lookup" })).status).toBe(400);
    expect((await call(lookup.GET, { token: support, path: "/api/v1/dashboard/lookup?q=x&extra=1" })).status).toBe(400);
    expect((await call(sub.GET, { token: support, path: "/x?range=2y", params: { id: "sub_a" } })).status).toBe(400);
    expect((await call(sub.GET, { token: support, path: "/x", params: { id: "sub_nope" } })).status).toBe(404);
    expect((await call(subDeliveries.GET, { token: support, path: "/x?cursor=abc", params: { id: "sub_a" } })).status).toBe(400);
    expect((await call(delivery.GET, { token: support, path: "/x", params: { id: "dlv_nope" } })).status).toBe(404);
    for (const fn of [lookup.GET, subs.GET, sub.GET, subDeliveries.GET, answers.GET, delivery.GET]) {
      expect((await call(fn, { token: producer, path: "/x?q=a", params: { id: "sub_a" } })).status).toBe(403);
    }
  });
});

describe("GET /api/v1/dashboard/redrives", () => {
  it("each poll carries the names of the batches' subscriptions, so a batch started after the page rendered reads by name", async () => {
    await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln'), ('other', 'Other') ON CONFLICT DO NOTHING`);
    await seedSubscription(db.pool, { id: "sub_other", name: "Other District SIS", tenant: "other" });
    await db.pool.query(
      `INSERT INTO redrive_batches (id, reason, actor, rate_per_second, kind, status, tenant_id, filter, created_at, updated_at)
       VALUES ('rdb_named', 'INC-1', 'user:t', 10, 'redrive', 'running', 'lincoln', '{"subscriptionId": "sub_a"}', now(), now()),
              ('rdb_other', 'INC-2', 'user:t', 10, 'redrive', 'done', 'other', '{"subscriptionId": "sub_other"}', now(), now())`,
    );
    const district = (await createApiToken(db.prisma, { role: "support", name: "lincoln-support", tenantId: "lincoln" })).token;
    const r = await call(batches.GET, { token: district, path: "/api/v1/dashboard/redrives?limit=50" });
    expect(r.status, r.text).toBe(200);
    expect(r.json.items.map((b: { id: string }) => b.id)).toEqual(["rdb_named"]);
    // Only the district's own subscriptions are named: another district's name never reaches it.
    expect(r.json.names).toEqual({ sub_a: "Lincoln USD" });
    const all = await call(batches.GET, { token: support, path: "/api/v1/dashboard/redrives?limit=50" });
    expect(all.json.names).toEqual({ sub_a: "Lincoln USD", sub_other: "Other District SIS" });
    expect((await call(batches.GET, { token: support, path: "/api/v1/dashboard/redrives?limit=0" })).status).toBe(400);
    expect((await call(batches.GET, { token: producer, path: "/api/v1/dashboard/redrives" })).status).toBe(403);
  });
});
