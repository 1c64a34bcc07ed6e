// Input limits at the API edge (issue 6 §6): each refused with a clear 4xx, never a 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "./db";
import { call, tokenFor } from "./api";
import * as events from "../app/api/v1/events/route";
import * as subs from "../app/api/v1/subscriptions/route";
import * as deliveries from "../app/api/v1/deliveries/route";
import { MAX_BODY_BYTES } from "../lib/api/handler";

let db: TestDb;
let producer: string;
let admin: string;
beforeAll(async () => {
  db = await createTestDatabase();
  producer = await tokenFor(db.prisma, "producer");
  admin = await tokenFor(db.prisma, "admin");
});
afterAll(async () => db?.close());

const event = (extra: Record<string, unknown> = {}) => ({ id: `evt_${Math.random().toString(36).slice(2)}`, type: "assignment.graded", data: { score: 1 }, ...extra });

describe("limits", () => {
  it("a body over the payload limit → 413 naming the limit, and nothing is written", async () => {
    const before = await tableCounts(db.pool);
    const r = await call(events.POST, { token: producer, body: event({ data: { blob: "x".repeat(MAX_BODY_BYTES) } }) });
    expect(r.status).toBe(413);
    expect(r.json.error.message).toContain(String(MAX_BODY_BYTES));
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("event type, event id and subject key formats → 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "Assignment Graded" }, "body.type"],
      [{ type: "graded" }, "body.type"],
      [{ id: "evt 1; drop" }, "body.id"],
      [{ id: "x".repeat(201) }, "body.id"],
      [{ subject: { "student id": "s1" } }, "body.subject"],
      [{ subject: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])) }, "body.subject"],
      [{ subject: { studentId: "s".repeat(201) } }, "body.subject"],
      [{ unexpected: true }, "body"],
    ];
    for (const [extra, field] of cases) {
      const r = await call(events.POST, { token: producer, body: event(extra) });
      expect(r.status, JSON.stringify(extra).slice(0, 80)).toBe(400);
      expect(r.json.error.message).toContain(field);
    }
  });

  it("not JSON → 415; malformed JSON → 400", async () => {
    expect((await call(events.POST, { token: producer, rawBody: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(415);
    expect((await call(events.POST, { token: producer, rawBody: "{nope" })).status).toBe(400);
  });

  it("page sizes over the maximum → 400", async () => {
    for (const q of ["limit=201", "limit=0", "limit=-1", "limit=abc"]) {
      const r = await call(deliveries.GET, { token: admin, path: `/api/v1/deliveries?${q}` });
      expect(r.status, q).toBe(400);
    }
    expect((await call(deliveries.GET, { token: admin, path: "/api/v1/deliveries?limit=200" })).status).toBe(200);
  });

  it("subscription fields: event type filters, too many types, long names → 400", async () => {
    const base = { name: "Lincoln", url: "https://lincoln.example.test/h", eventTypes: ["assignment.graded"] };
    for (const extra of [{ eventTypes: ["NOT A TYPE"] }, { eventTypes: [] }, { eventTypes: Array.from({ length: 101 }, (_, i) => `a.t${i}`) }, { name: "n".repeat(201) }, { secret: "plaintext" }]) {
      const r = await call(subs.POST, { token: admin, body: { ...base, ...extra } });
      expect(r.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
    }
  });
});
