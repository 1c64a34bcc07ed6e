// The event catalog: its routes and who may use them, the checks on a schema and its example, delete versus
// deprecate, the audit rows, the publish refusing data that fails its type's schema (single, batch and the
// producer's own transaction), and the signed example request verifying with the shown secret.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as types from "../../app/api/v1/event-types/route";
import * as one from "../../app/api/v1/event-types/[type]/route";
import * as events from "../../app/api/v1/events/route";
import * as batch from "../../app/api/v1/events/batch/route";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as tenants from "../../app/api/v1/tenants/route";
import { createApiToken } from "../../lib/auth/tokens";
import { publishEvent } from "../../lib/events/publish";
import { EXAMPLE_SECRET, requestText, signedExampleRequest } from "../../lib/catalog/signed-example";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { schemaFields } from "../../lib/catalog/schema-fields";
import { listEventTypes } from "../../lib/catalog/manage-event-types";
import { createPrisma } from "../../lib/db/prisma";
import type { Principal } from "../../lib/auth/principal";

let db: TestDb;
let admin: string, engineer: string, manager: string, producer: string, support: string, scopedEngineer: string, lincolnReader: string;

const GRADED_SCHEMA = {
  type: "object",
  required: ["student_id", "term_id", "score"],
  properties: {
    student_id: { type: "string", description: "The student's id in the SIS" },
    term_id: { type: "string" },
    score: { type: "number", minimum: 0, maximum: 100 },
  },
};
const EXAMPLE = { student_id: "stu_1", term_id: "2026-fall", score: 97 };

beforeAll(async () => {
  db = await createTestDatabase();
  [admin, engineer, manager, producer, support] = await Promise.all(["admin", "engineer", "manager", "producer", "support"].map((r) => tokenFor(db.prisma, r as never)));
  for (const id of ["lincoln", "jefferson"]) expect((await call(tenants.POST, { token: admin, body: { id, name: id } })).status).toBe(201);
  scopedEngineer = (await createApiToken(db.prisma, { role: "engineer", tenantId: "lincoln" })).token;
  lincolnReader = (await createApiToken(db.prisma, { role: "support", tenantId: "lincoln" })).token;
  const sub = (id: string, eventTypes: string[], tenant?: string) =>
    call(subs.POST, { token: admin, body: { id, name: id, url: `https://${id}.example.test/h`, eventTypes, ...(tenant ? { tenant } : {}) } });
  for (const r of [
    await sub("sub_lincoln", ["assignment.graded"], "lincoln"),
    await sub("sub_jefferson", ["assignment.graded"], "jefferson"),
    await sub("sub_all", ["*"]),
  ])
    expect(r.status, r.text).toBe(201);
});
afterAll(async () => db?.close());

const create = (token: string, body: unknown) => call(types.POST, { token, body });
const put = (token: string, type: string, body: unknown) => call(one.PUT, { method: "PUT", token, body, params: { type } });
const del = (token: string, type: string) => call(one.DELETE, { method: "DELETE", token, params: { type } });
const catalogRows = async () => (await db.pool.query("SELECT type, deprecated FROM event_types ORDER BY type")).rows;
const auditRows = async (type: string) =>
  (await db.pool.query("SELECT action, actor FROM audit_entries WHERE target_type = 'event_type' AND target_id = $1 ORDER BY id", [type])).rows;
const graded = (id: string, data: Record<string, unknown>) => ({ id, type: "assignment.graded", data, subject: { tenant: "lincoln" } });
const count = async (table: "events" | "deliveries", like: string) =>
  Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${table === "events" ? "id" : "event_id"} LIKE $1`, [like])).rows[0].n);

describe("the event catalog's routes", () => {
  it("an engineer catalogues a type with a schema and example; the create is audited", async () => {
    const r = await create(engineer, {
      type: "assignment.graded",
      description: "A grade was recorded.",
      schema: GRADED_SCHEMA,
      example: EXAMPLE,
      summaryFields: ["/student_id"],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ type: "assignment.graded", schema: GRADED_SCHEMA, example: EXAMPLE, summaryFields: ["/student_id"], deprecated: false });
    expect(await auditRows("assignment.graded")).toEqual([{ action: "event_type.create", actor: "token:test-engineer" }]);
    expect((await create(admin, { type: "assignment.graded", description: "again" })).status).toBe(409);
  });

  it("refuses creation by a manager, a producer and a tenant-scoped engineer, writing nothing", async () => {
    for (const token of [manager, producer, scopedEngineer, support]) {
      const r = await create(token, { type: "course.created", description: "x" });
      expect(r.status, r.text).toBe(403);
    }
    expect((await catalogRows()).map((r) => r.type)).toEqual(["assignment.graded"]);
  });

  it("every reader lists the whole catalog; a scoped reader sees its own tenant's subscriptions only", async () => {
    const global = await call(types.GET, { token: support });
    expect(global.status, global.text).toBe(200);
    expect(global.json.items[0].subscriptions.map((s: { id: string }) => s.id).sort()).toEqual(["sub_all", "sub_jefferson", "sub_lincoln"]);
    const scoped = await call(types.GET, { token: lincolnReader });
    expect(scoped.status, scoped.text).toBe(200);
    expect(scoped.json.items.map((t: { type: string }) => t.type)).toEqual(["assignment.graded"]);
    expect(scoped.json.items[0].subscriptions.map((s: { id: string }) => s.id)).toEqual(["sub_lincoln"]);
    const single = await call(one.GET, { token: lincolnReader, params: { type: "assignment.graded" } });
    expect(single.json.subscriptions.map((s: { id: string }) => s.id)).toEqual(["sub_lincoln"]);
    expect((await call(one.GET, { token: support, params: { type: "nope.nothing" } })).status).toBe(404);
    expect((await call(types.GET, { token: producer })).status).toBe(403);
  });

  it("past thousands of subscriptions a type names the first 50 by name and counts them all, none left out", async () => {
    // 5,100 more that take the type (the list used to stop at 5,000 subscriptions), and one naming it beside "*" and twice.
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types)
       SELECT 'sub_bulk_' || lpad(g::text, 4, '0'), 'Bulk ' || lpad(g::text, 4, '0'), 'jefferson', 'https://bulk.example.test/h', ARRAY['assignment.graded']
         FROM generate_series(1, 5100) g`,
    );
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_both', 'Aardvark both', 'https://both.example.test/h', ARRAY['*', 'assignment.graded', 'assignment.graded'])`,
    );
    try {
      const global = await call(types.GET, { token: support });
      expect(global.status, global.text).toBe(200);
      const t = global.json.items[0];
      expect(t.subscriptionCount).toBe(5100 + 4);
      expect(t.subscriptions).toHaveLength(50);
      expect(t.subscriptions.slice(0, 2).map((s: { id: string }) => s.id)).toEqual(["sub_both", "sub_bulk_0001"]);
      const single = await call(one.GET, { token: support, params: { type: "assignment.graded" } });
      expect(single.json).toMatchObject({ subscriptionCount: 5104 });
      expect(single.json.subscriptions).toEqual(t.subscriptions);
      // A district's reader counts its own only.
      const scoped = await call(types.GET, { token: lincolnReader });
      expect(scoped.json.items[0]).toMatchObject({ subscriptionCount: 1, subscriptions: [{ id: "sub_lincoln" }] });
    } finally {
      await db.pool.query("DELETE FROM subscriptions WHERE id LIKE 'sub_bulk_%' OR id = 'sub_both'");
    }
  });

  it("reads 10,000 subscriptions' types without sorting them all: in 64 kB of work memory, with no temporary file", async () => {
    // Numbering every subscription's types by name sorted them all on each read of the catalog (and of a subscription's
    // page, which asks for the types); past work_mem that sort spills to a temporary file, which temp_file_limit = 0 refuses.
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types)
       SELECT 'sub_many_' || lpad(g::text, 5, '0'), 'Many ' || lpad(g::text, 5, '0'), 'jefferson', 'https://many.example.test/h',
              CASE WHEN g % 1000 = 0 THEN ARRAY['assignment.graded', 'roster.updated'] ELSE ARRAY['assignment.graded'] END
         FROM generate_series(1, 10000) g`,
    );
    await db.pool.query("ANALYZE subscriptions");
    await db.pool.query(`ALTER DATABASE ${db.name} SET work_mem = '64kB'`);
    await db.pool.query(`ALTER DATABASE ${db.name} SET temp_file_limit = 0`);
    const tight = createPrisma(db.url);
    try {
      expect((await tight.$queryRaw<{ work_mem: string }[]>`SELECT current_setting('work_mem') AS work_mem`)[0].work_mem).toBe("64kB");
      const principal: Principal = { kind: "token", id: "t", actor: "token:test-support", role: "support", tenantId: null };
      const [t] = await listEventTypes(tight, principal);
      expect(t.type).toBe("assignment.graded");
      expect(t.subscriptionCount).toBe(10_000 + 3);
      expect(t.subscriptions).toHaveLength(50);
      expect(t.subscriptions.map((x) => x.id).slice(0, 2)).toEqual(["sub_many_00001", "sub_many_00002"]);
      // A rare type: walked off the name index to its end, one found.
      await tight.eventType.create({ data: { type: "roster.updated", description: "x", createdBy: "test", updatedBy: "test" } });
      const rare = (await listEventTypes(tight, principal)).find((x) => x.type === "roster.updated")!;
      expect(rare.subscriptionCount).toBe(10 + 1);
      expect(rare.subscriptions.map((x) => x.id)).toEqual([...Array.from({ length: 10 }, (_, i) => `sub_many_${String((i + 1) * 1000).padStart(5, "0")}`), "sub_all"]);
    } finally {
      await tight.$disconnect();
      await db.pool.query(`ALTER DATABASE ${db.name} RESET work_mem`);
      await db.pool.query(`ALTER DATABASE ${db.name} RESET temp_file_limit`);
      await db.pool.query("DELETE FROM subscriptions WHERE id LIKE 'sub_many_%'");
      await db.pool.query("DELETE FROM event_types WHERE type = 'roster.updated'");
    }
  });

  it("a schema that does not compile is a 400 naming schema with ajv's message, and nothing is saved", async () => {
    const r = await create(engineer, { type: "course.created", description: "x", schema: { type: "object", properties: { a: { type: "strin" } } } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details[0].path).toBe("schema");
    expect(r.json.error.message).toMatch(/^schema: the JSON Schema does not compile: .*properties\/a\/type must be equal to one of the allowed values/);
    const typo = await create(engineer, { type: "course.created", description: "x", schema: { type: "object", requried: ["a"] } });
    expect(typo.status).toBe(400);
    expect(typo.json.error.message).toMatch(/unknown keyword: "requried"/);
    expect((await catalogRows()).map((x) => x.type)).toEqual(["assignment.graded"]);
  });

  it("an example that does not match its own schema is a 400 naming example and each mismatch, nothing saved", async () => {
    const r = await create(engineer, { type: "course.created", description: "x", schema: GRADED_SCHEMA, example: { student_id: 7, score: 97 } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details).toEqual(
      expect.arrayContaining([
        { path: "example/student_id", message: "must be string" },
        { path: "example/term_id", message: "is required" },
      ]),
    );
    expect((await catalogRows()).map((x) => x.type)).toEqual(["assignment.graded"]);
    // An update that would leave the stored example failing a new schema is refused too.
    const u = await put(engineer, "assignment.graded", { schema: { ...GRADED_SCHEMA, required: ["grade_letter"] } });
    expect(u.status, u.text).toBe(400);
    expect(u.json.error.details[0]).toEqual({ path: "example/grade_letter", message: "is required" });
  });

  it("PUT changes a type and is audited; PUT of an unknown type is 404", async () => {
    const r = await put(engineer, "assignment.graded", { description: "A teacher recorded a grade." });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ description: "A teacher recorded a grade.", schema: GRADED_SCHEMA });
    expect((await put(engineer, "nope.nothing", { description: "x" })).status).toBe(404);
    expect((await put(manager, "assignment.graded", { description: "x" })).status).toBe(403);
    expect((await auditRows("assignment.graded")).map((a) => a.action)).toEqual(["event_type.create", "event_type.update"]);
  });
});

describe("publishing against the catalog", () => {
  it("a single publish whose data fails the schema is a 422 schema_mismatch naming the field; nothing is written", async () => {
    const r = await call(events.POST, { token: producer, body: graded("evt_bad_1", { student_id: "stu_1", term_id: "t", score: "A+" }) });
    expect(r.status, r.text).toBe(422);
    expect(r.json.error.code).toBe("schema_mismatch");
    expect(r.json.error.details).toEqual([{ path: "/data/score", message: "must be number" }]);
    const missing = await call(events.POST, { token: producer, body: graded("evt_bad_2", { student_id: "stu_1", score: 90 }) });
    expect(missing.json.error.details).toEqual([{ path: "/data/term_id", message: "is required" }]);
    expect(await count("events", "evt_bad_%")).toBe(0);
    expect(await count("deliveries", "evt_bad_%")).toBe(0);
    const ok = await call(events.POST, { token: producer, body: graded("evt_good_1", EXAMPLE) });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.headers.get("deprecation")).toBeNull();
  });

  it("a batch refuses only the event that fails the schema and writes the others", async () => {
    const r = await call(batch.POST, {
      token: producer,
      body: { events: [graded("evt_b_0", EXAMPLE), graded("evt_b_1", { ...EXAMPLE, score: 140 }), graded("evt_b_2", EXAMPLE)] },
    });
    expect(r.status, r.text).toBe(200);
    const [a, b, c] = r.json.results;
    expect(a).toMatchObject({ index: 0, status: "created" });
    expect(b).toMatchObject({ index: 1, id: "evt_b_1", error: { code: "schema_mismatch", details: [{ path: "/data/score", message: "must be <= 100" }] } });
    expect(c).toMatchObject({ index: 2, status: "created" });
    expect(await count("events", "evt_b_%")).toBe(2);
    expect(await count("deliveries", "evt_b_1")).toBe(0);
  });

  it("a type without a schema publishes any data, catalogued or not", async () => {
    expect((await create(engineer, { type: "course.created", description: "A course was created." })).status).toBe(201);
    for (const [id, type] of [
      ["evt_free_1", "course.created"],
      ["evt_free_2", "roster.synced"],
    ]) {
      const r = await call(events.POST, { token: producer, body: { id, type, data: { anything: [1, "two"] } } });
      expect(r.status, r.text).toBe(202);
    }
  });

  it("publishEvent inside the producer's transaction refuses a mismatch and writes nothing", async () => {
    await expect(db.prisma.$transaction((tx) => publishEvent(tx, graded("evt_tx_bad", { ...EXAMPLE, term_id: 3 })))).rejects.toMatchObject({
      code: "schema_mismatch",
      details: [{ path: "/data/term_id", message: "must be string" }],
    });
    expect(await count("events", "evt_tx_%")).toBe(0);
    await db.prisma.$transaction((tx) => publishEvent(tx, graded("evt_tx_ok", EXAMPLE)));
    expect(await count("events", "evt_tx_%")).toBe(1);
  });

  it("removing the schema lets the same data through at once", async () => {
    expect((await put(engineer, "assignment.graded", { schema: null, example: null })).status).toBe(200);
    const r = await call(events.POST, { token: producer, body: graded("evt_after_1", { score: "A+" }) });
    expect(r.status, r.text).toBe(202);
    expect((await put(engineer, "assignment.graded", { schema: GRADED_SCHEMA, example: EXAMPLE })).status).toBe(200);
  });
});

describe("summary fields on lookup cards", () => {
  it("a lookup card carries the values the type's summary fields name in its data", async () => {
    const r = await findLookupResults({ q: "evt_good_1" }, db.pool);
    expect(r.deliveries.length).toBeGreaterThan(0);
    for (const d of r.deliveries) expect(d.summary).toEqual([["student id", "stu_1"]]);
    // A type without summary fields carries none.
    const free = await findLookupResults({ q: "evt_free_1" }, db.pool);
    for (const d of free.deliveries) expect(d.summary).toBeUndefined();
  });
});

describe("deleting a catalogued type", () => {
  it("a type with events is kept as deprecated (and still publishes, saying so); one without is deleted; both audited", async () => {
    const d = await del(engineer, "assignment.graded");
    expect(d.status, d.text).toBe(200);
    expect(d.json).toMatchObject({ deleted: false, deprecated: true });
    expect((await catalogRows()).find((x) => x.type === "assignment.graded")).toEqual({ type: "assignment.graded", deprecated: true });
    const pub = await call(events.POST, { token: producer, body: graded("evt_dep_1", EXAMPLE) });
    expect(pub.status, pub.text).toBe(202);
    expect(pub.headers.get("deprecation")).toBe("true");
    // A batch holding an event of the deprecated type says so too; one without it does not.
    const withIt = await call(batch.POST, { token: producer, body: { events: [graded("evt_dep_b1", EXAMPLE), { id: "evt_dep_b2", type: "course.created", data: {} }] } });
    expect(withIt.status, withIt.text).toBe(200);
    expect(withIt.json.results.map((x: { status: string }) => x.status)).toEqual(["created", "created"]);
    expect(withIt.headers.get("deprecation")).toBe("true");
    const without = await call(batch.POST, { token: producer, body: { events: [{ id: "evt_dep_b3", type: "course.created", data: {} }] } });
    expect(without.headers.get("deprecation")).toBeNull();

    expect((await create(engineer, { type: "roster.unused", description: "never published" })).status).toBe(201);
    const gone = await del(admin, "roster.unused");
    expect(gone.json).toMatchObject({ deleted: true, deprecated: false });
    expect((await catalogRows()).map((x) => x.type)).not.toContain("roster.unused");
    expect((await auditRows("assignment.graded")).at(-1)).toEqual({ action: "event_type.deprecate", actor: "token:test-engineer" });
    expect((await auditRows("roster.unused")).map((a) => a.action)).toEqual(["event_type.create", "event_type.delete"]);
    expect((await del(manager, "course.created")).status).toBe(403);
    expect((await del(engineer, "nope.nothing")).status).toBe(404);
  });
});

describe("the signed example request", () => {
  it("verifies with the shown example secret using the Standard Webhooks verifier, and fails with another", () => {
    const r = signedExampleRequest("assignment.graded", EXAMPLE, new Date());
    const headers = Object.fromEntries(r.headers);
    expect(r.secret).toBe(EXAMPLE_SECRET);
    expect(new Webhook(r.secret).verify(r.body, headers)).toMatchObject({ type: "assignment.graded", data: EXAMPLE });
    expect(() => new Webhook(`whsec_${Buffer.from("another-secret-of-32-bytes-long!").toString("base64")}`).verify(r.body, headers)).toThrow();
    // The text shown on the page carries the same headers and body.
    const text = requestText(r);
    expect(text).toContain(`webhook-signature: ${headers["webhook-signature"]}`);
    expect(text.endsWith(r.body)).toBe(true);
  });
});

describe("the catalog page's field table", () => {
  it("lists the required fields in the schema's order, then the optional ones by name, nested ones dotted", async () => {
    const r = await call(one.GET, { token: support, params: { type: "assignment.graded" } });
    // Read back from jsonb, whose key order is not the author's.
    const schema = { ...r.json.schema, properties: { ...r.json.schema.properties, note: { type: "object", properties: { by: { type: "string" } } } } };
    expect(schemaFields(schema).map((f) => [f.name, f.type, f.required])).toEqual([
      ["student_id", "string", true],
      ["term_id", "string", true],
      ["score", "number", true],
      ["note", "object", false],
      ["note.by", "string", false],
    ]);
    expect(schemaFields(schema)[0].description).toBe("The student's id in the SIS");
  });
});
