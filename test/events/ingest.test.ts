import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as events from "../../app/api/v1/events/route";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import { publishEvent } from "../../lib/events/publish";
import { deliveryKey } from "../../lib/ledger/delivery-key";

let db: TestDb;
let admin: string;
let producer: string;
let support: string;

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  producer = await tokenFor(db.prisma, "producer");
  support = await tokenFor(db.prisma, "support");
  for (const [id, tenant, state] of [
    ["sub_lincoln", "lincoln", "active"],
    ["sub_jefferson", "jefferson", "active"],
    ["sub_lincoln_paused", "lincoln", "active"],
  ] as const) {
    const r = await call(subs.POST, {
      token: admin,
      body: { id, name: `${tenant} SIS`, url: `https://${tenant}.example.test/webhooks`, eventTypes: ["assignment.graded"], tenant },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.secret).toMatch(/^whsec_/);
    void state;
  }
  const p = await call(sub.PATCH, { method: "PATCH", token: admin, params: { id: "sub_lincoln_paused" }, body: { state: "paused", reason: "district maintenance" } });
  expect(p.status, p.text).toBe(200);
  await call(subs.POST, { token: admin, body: { id: "sub_all", name: "Analytics", url: "https://analytics.example.test/in", eventTypes: ["*"] } });
});
afterAll(async () => db?.close());

const graded = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: "assignment.graded",
  data: { studentId: "stu_881", assignmentId: "asg_7", score: 93 },
  subject: { tenant: "lincoln", studentId: "stu_881", assignmentId: "asg_7" },
  ...extra,
});

describe("POST /api/v1/events", () => {
  it("writes the event and one delivery per matching subscription, paused ones held", async () => {
    const r = await call(events.POST, { token: producer, body: graded("evt_1001") });
    expect(r.status, r.text).toBe(202);
    expect(r.json.eventId).toBe("evt_1001");
    const ids = r.json.deliveries.map((d: { subscriptionId: string }) => d.subscriptionId).sort();
    expect(ids).toEqual(["sub_all", "sub_lincoln", "sub_lincoln_paused"]);
    for (const d of r.json.deliveries) expect(d.deliveryKey).toBe(deliveryKey(d.subscriptionId, "evt_1001"));
    const stored = await db.prisma.event.findUniqueOrThrow({ where: { id: "evt_1001" } });
    const body = JSON.parse(Buffer.from(stored.payload).toString("utf8"));
    expect(body).toMatchObject({ id: "evt_1001", type: "assignment.graded", data: { score: 93 } });
    expect(stored.subjectValues).toContain("stu_881");
  });

  it("the same event id again answers 200 with the same deliveries and writes nothing", async () => {
    const before = await tableCounts(db.pool);
    const first = await call(events.POST, { token: producer, body: graded("evt_1001") });
    expect(first.status).toBe(200);
    expect(first.json.deliveries).toHaveLength(3);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("concurrent publishes of one id make one set of deliveries", async () => {
    const rs = await Promise.all(Array.from({ length: 8 }, () => call(events.POST, { token: producer, body: graded("evt_race") })));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);
    const n = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id = 'evt_race'");
    expect(n.rows[0].n).toBe(3);
  });

  const bad: [string, Record<string, unknown>, number, string][] = [
    ["malformed JSON", { rawBody: '{"id": "x", "type": ' }, 400, "invalid_json"],
    ["a missing id", { body: { type: "assignment.graded", data: {} } }, 400, "validation_failed"],
    ["a wrongly typed field", { body: { id: "e1", type: "assignment.graded", data: "not an object" } }, 400, "validation_failed"],
    ["a bad event type format", { body: { id: "e2", type: "Assignment Graded", data: {} } }, 400, "validation_failed"],
    ["an unknown field", { body: { id: "e3", type: "a.b", data: {}, extra: 1 } }, 400, "validation_failed"],
    ["a bad subject key", { body: { id: "e4", type: "a.b", data: {}, subject: { "student id": "x" } } }, 400, "validation_failed"],
    ["over 256 KB", { body: { id: "e5", type: "a.b", data: { blob: "x".repeat(300 * 1024) } } }, 413, "payload_too_large"],
    ["not JSON content", { rawBody: "id=1", headers: { "content-type": "application/x-www-form-urlencoded" } }, 415, "unsupported_media_type"],
    ["no token", { body: graded("e6"), token: "" }, 401, "unauthorized"],
    ["a wrong token", { body: graded("e7"), token: "hl_nope" }, 401, "unauthorized"],
  ];
  for (const [name, opts, status, code] of bad) {
    it(`${name} → ${status} ${code}, nothing written`, async () => {
      const before = await tableCounts(db.pool);
      const r = await call(events.POST, { method: "POST", token: producer, ...opts });
      expect(r.status, r.text).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.message).toBeTruthy();
      expect(await tableCounts(db.pool)).toEqual(before);
    });
  }

  it("names the offending field", async () => {
    const r = await call(events.POST, { token: producer, body: { id: "e8", type: "assignment.graded", data: 5 } });
    expect(r.json.error.details[0].path).toBe("body.data");
  });

  it("a support token may not publish (403) and nothing is written", async () => {
    const before = await tableCounts(db.pool);
    const r = await call(events.POST, { token: support, body: graded("evt_forbidden") });
    expect(r.status).toBe(403);
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

describe("publishEvent in the producer's transaction", () => {
  it("a rolled-back transaction leaves nothing", async () => {
    const before = await tableCounts(db.pool);
    await expect(
      db.prisma.$transaction(async (tx) => {
        const r = await publishEvent(tx, graded("evt_rollback"));
        expect(r.deliveries.length).toBe(3);
        throw new Error("producer failed after publishing");
      }),
    ).rejects.toThrow("producer failed");
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await db.prisma.event.findUnique({ where: { id: "evt_rollback" } })).toBeNull();
  });

  it("a committed transaction keeps the producer's write and the deliveries together", async () => {
    await db.prisma.$transaction(async (tx) => {
      await tx.auditEntry.create({ data: { actor: "producer", action: "grade.saved", targetType: "grade", targetId: "g1" } });
      await publishEvent(tx, graded("evt_commit"));
    });
    expect(await db.prisma.delivery.count({ where: { eventId: "evt_commit" } })).toBe(3);
  });

  it("on a pg client after BEGIN: a rollback leaves nothing, a commit keeps the event and its deliveries, a republish finds them", async () => {
    // A student of its own, so the searches below by stu_881 find what they did before.
    const graded = (id: string) => ({ id, type: "assignment.graded", data: { studentId: "stu_pg" }, subject: { tenant: "lincoln", studentId: "stu_pg" } });
    const before = await tableCounts(db.pool);
    const c = await db.pool.connect();
    try {
      await c.query("BEGIN");
      expect((await publishEvent(c, graded("evt_pg_rollback"))).deliveries.length).toBe(3);
      await c.query("ROLLBACK");
      expect(await tableCounts(db.pool)).toEqual(before);
      await c.query("BEGIN");
      const first = await publishEvent(c, graded("evt_pg_commit"));
      await c.query("COMMIT");
      expect(first).toMatchObject({ eventId: "evt_pg_commit", created: true });
      expect(await db.prisma.delivery.count({ where: { eventId: "evt_pg_commit" } })).toBe(3);
      // The same id again, now in a Prisma transaction: the stored deliveries, not new ones.
      const again = await db.prisma.$transaction((tx) => publishEvent(tx, graded("evt_pg_commit")));
      expect(again).toEqual({ eventId: "evt_pg_commit", created: false, deliveries: first.deliveries });
    } finally {
      c.release();
    }
  });
});

describe("subscriptions API", () => {
  it("GET answers the subscription without secrets; unknown → 404", async () => {
    const r = await call(sub.GET, { token: support, params: { id: "sub_lincoln" } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: "sub_lincoln", tenant: "lincoln", state: "active" });
    expect(JSON.stringify(r.json)).not.toContain("whsec_");
    const missing = await call(sub.GET, { token: support, params: { id: "sub_nope" } });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
  });

  it("bad subscription input → 400 naming the field, nothing written", async () => {
    const before = await tableCounts(db.pool);
    for (const body of [
      { name: "x", url: "not a url", eventTypes: ["a.b"] },
      { name: "x", url: "ftp://x.test/", eventTypes: ["a.b"] },
      { name: "x", url: "https://x.test/", eventTypes: [] },
      { name: "x", url: "https://x.test/", eventTypes: ["a.b"], secret: "plain" },
      { name: "x", url: "https://x.test/", eventTypes: ["a.b"], retryPolicy: { ladderSeconds: [-1] } },
    ]) {
      const r = await call(subs.POST, { token: admin, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toMatch(/url|eventTypes|secret|ladderSeconds/);
    }
    const dup = await call(subs.POST, { token: admin, body: { id: "sub_lincoln", name: "x", url: "https://x.test/", eventTypes: ["a.b"] } });
    expect(dup.status).toBe(409);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("pause and resume are audited in the same transaction", async () => {
    const rows = await db.prisma.auditEntry.findMany({ where: { targetId: "sub_lincoln_paused", action: "subscription.pause" } });
    expect(rows).toHaveLength(1);
    expect(rows[0].reason).toBe("district maintenance");
  });

  it("support may read but not create (403)", async () => {
    const r = await call(subs.POST, { token: support, body: { name: "x", url: "https://x.test/", eventTypes: ["a.b"] } });
    expect(r.status).toBe(403);
  });
});

describe("GET /api/v1/deliveries", () => {
  it("finds by student id and pages with a cursor", async () => {
    const r = await call(deliveries.GET, { token: support, path: "/api/v1/deliveries?q=stu_881&limit=2" });
    expect(r.status, r.text).toBe(200);
    expect(r.json.items).toHaveLength(2);
    expect(r.json.nextCursor).toBeTruthy();
    const seen = new Set(r.json.items.map((d: { id: string }) => d.id));
    let cursor = r.json.nextCursor;
    while (cursor) {
      const next = await call(deliveries.GET, { token: support, path: `/api/v1/deliveries?q=stu_881&limit=2&cursor=${cursor}` });
      for (const d of next.json.items) {
        expect(seen.has(d.id)).toBe(false);
        seen.add(d.id);
      }
      cursor = next.json.nextCursor;
    }
    expect(seen.size).toBe(9);
  });

  it("an unknown subscription filter or a bad limit → 400", async () => {
    expect((await call(deliveries.GET, { token: support, path: "/api/v1/deliveries?subscriptionId=sub_nope" })).status).toBe(400);
    expect((await call(deliveries.GET, { token: support, path: "/api/v1/deliveries?limit=5000" })).status).toBe(400);
    expect((await call(deliveries.GET, { token: support, path: "/api/v1/deliveries?state=lost" })).status).toBe(400);
  });
});
