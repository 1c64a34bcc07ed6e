// A republish of an existing event id: the same event (whatever its key order
// or spacing) stays a 200 with the same deliveries; other type, data or
// subject is a 409 event_conflict naming the id and writes nothing, on every
// publish path (HTTP ingest, publishEvent in a producer's transaction). And
// migration 0014 on a database that already holds events: their hash is
// unknown (NULL) and only the type is compared for them.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as events from "../../app/api/v1/events/route";
import { publishEventStandalone } from "../../lib/events/publish";
import { publishBatch } from "../../lib/events/batch";
import { canonicalJson, eventContentHash } from "../../lib/events/canonical";
import { databaseBefore } from "../helpers/migration-db";
import type { TCreateEvent } from "../../lib/events/event-input";

let db: TestDb;
let producer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  producer = await tokenFor(db.prisma, "producer");
  await db.pool.query("INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ('sub_lincoln', 'Lincoln', 'lincoln', 'https://x.example.test/h', $1)", [
    ["assignment.graded"],
  ]);
});
afterAll(async () => db?.close());

const graded = (id: string, score = 90): TCreateEvent => ({
  id,
  type: "assignment.graded",
  data: { studentId: "stu_1", score, rubric: { a: 1, b: [1, 2] } },
  subject: { tenant: "lincoln", studentId: "stu_1" },
});

describe("canonical JSON", () => {
  it("sorts keys at every depth, keeps array order, and ignores spacing", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson(JSON.parse('{ "b" : 1.0, "a" : null }'))).toBe('{"a":null,"b":1}');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });
  it("the hash covers type, data and subject but not occurredAt", () => {
    const e = graded("evt_h");
    expect(eventContentHash(e).equals(eventContentHash({ ...e, occurredAt: "2020-01-01T00:00:00Z" } as TCreateEvent))).toBe(true);
    expect(eventContentHash(e).equals(eventContentHash({ ...e, type: "assignment.deleted" }))).toBe(false);
    expect(eventContentHash(e).equals(eventContentHash({ ...e, subject: { tenant: "lincoln" } }))).toBe(false);
    expect(eventContentHash(e).equals(eventContentHash(graded("evt_h", 91)))).toBe(false);
  });
  it("the hash is the sha256 of the canonical text, as stored hashes were made (they are compared on every republish)", () => {
    const e = graded("evt_h");
    const text = canonicalJson({ type: e.type, data: e.data, subject: e.subject ?? {} });
    expect(eventContentHash(e).toString("hex")).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    expect(eventContentHash({ type: "t", data: { name: "Zoë 😀" } }).toString("hex")).toBe(
      createHash("sha256").update('{"data":{"name":"Zoë 😀"},"subject":{},"type":"t"}', "utf8").digest("hex"),
    );
  });
});

describe("HTTP ingest", () => {
  it("the same event again, keys reordered and another occurredAt: 200 with the same deliveries", async () => {
    const first = await call(events.POST, { token: producer, body: graded("evt_r1") });
    expect(first.status).toBe(202);
    const reordered = {
      subject: { studentId: "stu_1", tenant: "lincoln" },
      data: { rubric: { b: [1, 2], a: 1 }, score: 90, studentId: "stu_1" },
      type: "assignment.graded",
      id: "evt_r1",
    };
    const again = await call(events.POST, { token: producer, body: { ...reordered, occurredAt: "2026-01-01T00:00:00Z" } });
    expect(again.status, again.text).toBe(200);
    expect(again.json.deliveries).toEqual(first.json.deliveries);
  });

  it("changed data, subject or type: 409 event_conflict naming the id, nothing written", async () => {
    await call(events.POST, { token: producer, body: graded("evt_r2") });
    const before = await tableCounts(db.pool);
    const payloadBefore = (await db.pool.query("SELECT payload FROM events WHERE id = 'evt_r2'")).rows[0].payload;
    for (const changed of [
      graded("evt_r2", 95),
      { ...graded("evt_r2"), subject: { tenant: "lincoln", studentId: "stu_2" } },
      { ...graded("evt_r2"), type: "assignment.deleted" },
    ]) {
      const r = await call(events.POST, { token: producer, body: changed });
      expect(r.status, r.text).toBe(409);
      expect(r.json.error.code).toBe("event_conflict");
      expect(r.json.error.message).toContain("evt_r2");
      expect(r.json.error.details).toEqual({ eventId: "evt_r2" });
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.pool.query("SELECT payload FROM events WHERE id = 'evt_r2'")).rows[0].payload).toEqual(payloadBefore);
  });

  it("a changed event in the same group as the original: one is stored, the other is refused", async () => {
    const rs = await Promise.allSettled([
      call(events.POST, { token: producer, body: graded("evt_r3") }),
      call(events.POST, { token: producer, body: graded("evt_r3", 10) }),
    ]);
    const statuses = rs.map((r) => (r.status === "fulfilled" ? r.value.status : 0)).sort();
    expect(statuses).toEqual([202, 409]);
  });
});

describe("publishEvent in a producer's transaction", () => {
  it("the same event: not created, the same deliveries; changed data: event_conflict, nothing written", async () => {
    const first = await publishEventStandalone(db.prisma, graded("evt_p1"));
    expect(first.created).toBe(true);
    const again = await publishEventStandalone(db.prisma, graded("evt_p1"));
    expect(again).toEqual({ ...first, created: false });
    const before = await tableCounts(db.pool);
    await expect(publishEventStandalone(db.prisma, graded("evt_p1", 12))).rejects.toMatchObject({ code: "event_conflict", details: { eventId: "evt_p1" } });
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

describe("batch publish", () => {
  it("a batch republishing one event unchanged and one changed: duplicate and event_conflict, nothing written", async () => {
    await call(events.POST, { token: producer, body: graded("evt_b1") });
    await call(events.POST, { token: producer, body: graded("evt_b2") });
    const before = await tableCounts(db.pool);
    const { results } = await publishBatch({ events: [graded("evt_b1"), graded("evt_b2", 50)] }, { maxEventBytes: 256 * 1024 });
    expect(results[0]).toMatchObject({ index: 0, id: "evt_b1", status: "duplicate" });
    expect(results[1]).toMatchObject({ index: 1, id: "evt_b2", error: { code: "event_conflict", details: { eventId: "evt_b2" } } });
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

describe("migration 0014 on a database that already holds events", () => {
  it("old events keep a NULL hash (unknown): a republish with the same type is still a 200, another type a 409", async () => {
    const mdb = await databaseBefore("0014");
    const pool = mdb.client;
    try {
      // Every migration before 0014, then an event written as the old function wrote it.
      await pool.query(
        "INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ('sub_old', 'Old', 'lincoln', 'https://x.example.test/h', '{assignment.graded}')",
      );
      await pool.query(
        `SELECT * FROM hl_enqueue_events(ARRAY['evt_old'], ARRAY['assignment.graded'], ARRAY[convert_to('{}', 'UTF8')], ARRAY[now()], ARRAY['lincoln'],
                                         ARRAY['{"tenant":"lincoln"}'::jsonb], ARRAY['lincoln'], ARRAY[1], ARRAY[1])`,
      );
      // Now 0014 (and anything after it).
      const applied = await mdb.applyRest();
      expect(applied).toContain("0014_event_hash");
      const { rows } = await pool.query("SELECT content_hash FROM events WHERE id = 'evt_old'");
      expect(rows[0].content_hash).toBeNull();
    } catch (e) {
      await mdb.close();
      throw e;
    }
    // The old event through today's code, on this database.
    const saved = process.env.DATABASE_URL;
    const { createPrisma } = await import("../../lib/db/prisma");
    const prisma = createPrisma(mdb.url);
    try {
      const same = await publishEventStandalone(prisma, { id: "evt_old", type: "assignment.graded", data: { anything: 1 }, subject: { tenant: "lincoln" } });
      expect(same.created).toBe(false);
      expect(same.deliveries.map((d) => d.subscriptionId)).toEqual(["sub_old"]);
      await expect(publishEventStandalone(prisma, { id: "evt_old", type: "assignment.deleted", data: {} })).rejects.toMatchObject({ code: "event_conflict" });
      // A new event on the migrated database gets its hash.
      await publishEventStandalone(prisma, graded("evt_new"));
      const rows = await prisma.$queryRawUnsafe<{ h: Uint8Array }[]>("SELECT content_hash AS h FROM events WHERE id = 'evt_new'");
      expect(Buffer.from(rows[0].h).equals(eventContentHash(graded("evt_new")))).toBe(true);
    } finally {
      await prisma.$disconnect();
      process.env.DATABASE_URL = saved;
      await mdb.close();
    }
  });
});
