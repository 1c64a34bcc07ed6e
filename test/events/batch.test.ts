import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as batch from "../../app/api/v1/events/batch/route";
import * as subs from "../../app/api/v1/subscriptions/route";
import { MAX_BODY_BYTES } from "../../lib/api/handler";
import { MAX_BATCH_BYTES } from "../../lib/events/batch";

let db: TestDb;
let producer: string;
let support: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const admin = await tokenFor(db.prisma, "admin");
  producer = await tokenFor(db.prisma, "producer");
  support = await tokenFor(db.prisma, "support");
  for (const tenant of ["lincoln", "jefferson"]) {
    const r = await call(subs.POST, {
      token: admin,
      body: { id: `sub_${tenant}`, name: tenant, url: `https://${tenant}.example.test/h`, eventTypes: ["assignment.graded"], tenant },
    });
    expect(r.status, r.text).toBe(201);
  }
  await call(subs.POST, { token: admin, body: { id: "sub_all", name: "all", url: "https://all.example.test/h", eventTypes: ["*"] } });
});
afterAll(async () => db?.close());

const graded = (id: string, tenant = "lincoln") => ({ id, type: "assignment.graded", data: { score: 90 }, subject: { tenant, studentId: "stu_1" } });
const eventCount = async (prefix: string) => Number((await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id LIKE $1", [`${prefix}%`])).rows[0].n);

describe("POST /api/v1/events/batch", () => {
  it("writes every event of a batch and answers one result per event, in order", async () => {
    const events = Array.from({ length: 500 }, (_, i) => graded(`bat_ok_${i}`, i % 2 ? "lincoln" : "jefferson"));
    const r = await call(batch.POST, { token: producer, body: { events } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results).toHaveLength(500);
    r.json.results.forEach((x: { index: number; id: string; status: string; deliveries: unknown[] }, i: number) => {
      expect(x).toMatchObject({ index: i, id: `bat_ok_${i}`, status: "created" });
      expect(x.deliveries).toHaveLength(2);
    });
    expect(await eventCount("bat_ok_")).toBe(500);
    const d = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'bat_ok_%'");
    expect(d.rows[0].n).toBe(1000);
  });

  it("a mix of valid and invalid events writes the valid ones and reports each invalid one with its index", async () => {
    const events = [
      graded("bat_mix_0"),
      { id: "bat_mix_1", type: "assignment.graded" },
      graded("bat_mix_2"),
      "not an event",
      { ...graded("bat_mix_4"), type: "hookledger.fake" },
    ];
    const r = await call(batch.POST, { token: producer, body: { events } });
    expect(r.status, r.text).toBe(200);
    const [a, b, c, d, e] = r.json.results;
    expect(a).toMatchObject({ index: 0, id: "bat_mix_0", status: "created" });
    expect(b).toMatchObject({ index: 1, id: "bat_mix_1", error: { code: "validation_failed" } });
    expect(b.error.details[0].path).toBe("events.1.data");
    expect(c).toMatchObject({ index: 2, status: "created" });
    expect(d).toMatchObject({ index: 3, error: { code: "validation_failed" } });
    expect(d.id).toBeUndefined();
    expect(e).toMatchObject({ index: 4, id: "bat_mix_4", error: { code: "validation_failed" } });
    const ids = (await db.pool.query("SELECT id FROM events WHERE id LIKE 'bat_mix_%' ORDER BY id")).rows.map((x) => x.id);
    expect(ids).toEqual(["bat_mix_0", "bat_mix_2"]);
  });

  it("duplicates inside one batch resolve to one event; a republished batch answers duplicate and writes nothing", async () => {
    const events = [graded("bat_dup"), graded("bat_other"), graded("bat_dup"), graded("bat_dup")];
    const r = await call(batch.POST, { token: producer, body: { events } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results.map((x: { status: string }) => x.status)).toEqual(["created", "created", "duplicate", "duplicate"]);
    const keys = (x: { deliveries: { id: string }[] }) => x.deliveries.map((d) => d.id).sort();
    expect(keys(r.json.results[2])).toEqual(keys(r.json.results[0]));
    const n = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id = 'bat_dup'");
    expect(n.rows[0].n).toBe(2);

    const before = await tableCounts(db.pool);
    const again = await call(batch.POST, { token: producer, body: { events } });
    expect(again.json.results.map((x: { status: string }) => x.status)).toEqual(["duplicate", "duplicate", "duplicate", "duplicate"]);
    expect(keys(again.json.results[0])).toEqual(keys(r.json.results[0]));
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("an event over the single-publish size limit fails only itself", async () => {
    const big = { ...graded("bat_big"), data: { blob: "x".repeat(MAX_BODY_BYTES) } };
    const r = await call(batch.POST, { token: producer, body: { events: [graded("bat_small"), big] } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results[0].status).toBe("created");
    expect(r.json.results[1]).toMatchObject({ index: 1, id: "bat_big", error: { code: "payload_too_large" } });
    expect(await eventCount("bat_big")).toBe(0);
  });

  it("with ?deliveries=false answers each event's status without its deliveries, and writes the same rows", async () => {
    const events = [graded("bat_so_1"), graded("bat_so_2"), graded("bat_so_1"), { id: "bat_so_3", type: "assignment.graded" }];
    const r = await call(batch.POST, { token: producer, path: "/api/v1/events/batch?deliveries=false", body: { events } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results).toEqual([
      { index: 0, id: "bat_so_1", status: "created" },
      { index: 1, id: "bat_so_2", status: "created" },
      { index: 2, id: "bat_so_1", status: "duplicate" },
      { index: 3, id: "bat_so_3", error: expect.objectContaining({ code: "validation_failed" }) },
    ]);
    const d = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'bat_so_%'");
    expect(d.rows[0].n).toBe(4);
    // The same batch again, with its deliveries: what was written is what a full answer names.
    const full = await call(batch.POST, { token: producer, path: "/api/v1/events/batch?deliveries=true", body: { events: events.slice(0, 2) } });
    expect(full.json.results.map((x: { status: string; deliveries: unknown[] }) => [x.status, x.deliveries.length])).toEqual([
      ["duplicate", 2],
      ["duplicate", 2],
    ]);
  });

  it.each(["yes", "0", ""])("refuses ?deliveries=%s (400) before reading the batch, and writes nothing", async (value) => {
    const before = await tableCounts(db.pool);
    const r = await call(batch.POST, { token: producer, path: `/api/v1/events/batch?deliveries=${value}`, body: { events: [graded("bat_q_1")] } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe("validation_failed");
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  const refused: [string, { body?: unknown; rawBody?: string }, number, string][] = [
    ["events not a list", { body: { events: graded("bat_r_1") } }, 400, "validation_failed"],
    ["a bare list", { body: [graded("bat_r_2")] }, 400, "validation_failed"],
    ["an empty batch", { body: { events: [] } }, 400, "validation_failed"],
    ["501 events", { body: { events: Array.from({ length: 501 }, (_, i) => graded(`bat_r_3_${i}`)) } }, 400, "validation_failed"],
    ["an unknown envelope key", { body: { events: [graded("bat_r_4")], extra: 1 } }, 400, "validation_failed"],
    ["malformed JSON", { rawBody: `{"events": [${JSON.stringify(graded("bat_r_5"))}` }, 400, "invalid_json"],
    [
      "a body over the batch limit",
      { body: { events: [graded("bat_r_6"), { ...graded("bat_r_7"), data: { blob: "x".repeat(MAX_BATCH_BYTES) } }] } },
      413,
      "payload_too_large",
    ],
  ];
  it.each(refused)("refuses %s and writes nothing", async (_name, input, status, code) => {
    const before = await tableCounts(db.pool);
    const r = await call(batch.POST, { token: producer, ...input });
    expect(r.status, r.text).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await eventCount("bat_r_")).toBe(0);
  });

  it("needs events.publish", async () => {
    const r = await call(batch.POST, { token: support, body: { events: [graded("bat_perm")] } });
    expect(r.status).toBe(403);
    expect(await eventCount("bat_perm")).toBe(0);
  });
});
