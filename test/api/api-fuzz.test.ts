// The bad-input sweep: 1,000 generated malformed requests against
// the public API's route handlers, called in-process with real Requests.
// Every one must be answered 4xx with the error envelope, never a 500, and
// the database must be exactly as it was before (row counts and a checksum of
// every table). Each generated request is invalid by construction: one field
// broken for certain, the rest valid, so the sweep reaches past the first
// check into the service code (URL validation, filter lookups, transactions
// that must roll back).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { tokenFor } from "../helpers/api";
import { createSub } from "../helpers/worker-helpers";
import * as events from "../../app/api/v1/events/route";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import * as delivery from "../../app/api/v1/deliveries/[id]/route";
import * as deliveryRedrive from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as redrive from "../../app/api/v1/redrives/[id]/route";
import * as redriveCancel from "../../app/api/v1/redrives/[id]/cancel/route";

const RUNS = 1_000;
const SEED = Number(process.env.FUZZ_SEED ?? 20261129);

type Route = (req: Request, ctx?: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Fuzz = {
  name: string;
  fn: Route;
  method: string;
  path: string;
  params?: Record<string, string>;
  role: "producer" | "admin" | "support" | "none" | "bad";
  body?: string | ArrayBuffer;
  contentType?: string | null;
};

let db: TestDb;
const tokens: Record<string, string> = {};
/** Ids of rows seeded below: the sweep aims some requests at real targets. */
const SUB = "sub_fuzz";
let deliveredId = "";
let deadId = "";
let batchId = "";

beforeAll(async () => {
  db = await createTestDatabase();
  for (const role of ["producer", "admin", "support"] as const) tokens[role] = await tokenFor(db.prisma, role);
  // Seeded with SQL: this file leaves HOOKLEDGER_ALLOW_PRIVATE_TARGETS unset, so loopback targets are refused through the API.
  await createSub(db.pool, { id: SUB, url: "http://127.0.0.1:9/hooks" });
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at) VALUES ('evt_fuzz_1', 'assignment.graded', convert_to('{"id":"evt_fuzz_1"}', 'UTF8'), now()),
                                                               ('evt_fuzz_2', 'assignment.graded', convert_to('{"id":"evt_fuzz_2"}', 'UTF8'), now())`,
  );
  const ins = await db.pool.query<{ id: string }>(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, delivered_at, dead_letter_reason, dead_lettered_at, last_status_code, event_at)
     VALUES (hl_delivery_key('${SUB}', 'evt_fuzz_1'), 'evt_fuzz_1', '${SUB}', 'assignment.graded', 'delivered', now(), NULL, NULL, 200,
             (SELECT created_at FROM event_keys WHERE id = 'evt_fuzz_1')),
            (hl_delivery_key('${SUB}', 'evt_fuzz_2'), 'evt_fuzz_2', '${SUB}', 'assignment.graded', 'dead_letter', NULL, 'permanent', now(), 422,
             (SELECT created_at FROM event_keys WHERE id = 'evt_fuzz_2'))
     RETURNING id`,
  );
  [deliveredId, deadId] = ins.rows.map((r) => r.id);
  const b = await db.pool.query<{ id: string }>(
    `INSERT INTO redrive_batches (filter, reason, actor, rate_per_second, matched, status, finished_at)
     VALUES ('{}'::jsonb, 'INC-1 seeded', 'token:seed', 10, 0, 'done', now()) RETURNING id`,
  );
  batchId = b.rows[0].id;
});
afterAll(async () => db?.close());

/** Row count and checksum of every table (api_tokens without last_used_at, which a call may touch on purpose). */
async function snapshot(pool: pg.Pool): Promise<Record<string, string>> {
  const { rows: tables } = await pool.query<{ t: string }>(
    "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const out: Record<string, string> = {};
  for (const { t } of tables) {
    const row = t === "api_tokens" ? "(x.id, x.name, x.role, x.token_hash, x.created_at, x.revoked_at)" : "x";
    const { rows } = await pool.query<{ n: number; sum: string }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(md5(${row}::text), '' ORDER BY md5(${row}::text)), '')) AS sum FROM "${t}" x`,
    );
    out[t] = `${rows[0].n} rows, ${rows[0].sum}`;
  }
  return out;
}

// ---- generators: each yields a request that is wrong in at least one certain way ----

const json = (v: unknown) => JSON.stringify(v);
const junkKey = fc.constantFrom("extra", "__proto__", "constructor", "Id", "ID", "state ", "evil", "$where", "retry_policy");
const notAString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 }));
const notAnObject = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
const badEventType = fc.oneof(
  fc.constantFrom("", "Assignment.Graded", "assignment", "assignment..graded", ".graded", "assignment.graded.", "1abc.def", "a b.c", "a".repeat(101) + ".x"),
  notAString,
);
const badEventId = fc.oneof(fc.constantFrom("", "a".repeat(201), "evt 1", "evt/1", "évt_1", "evt_1\n", "evt;drop table events"), notAString);
/** URLs the API must refuse at save time, whatever else the body says. */
const badUrl = fc.oneof(
  fc.constantFrom(
    "",
    "not a url",
    "/relative/path",
    "ftp://files.example.com/x",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "http://",
    "https://user:pass@example.com/hook",
    "http://127.0.0.1:8080/hook",
    "http://10.0.0.7/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/hook",
    "http://0.0.0.0/",
    "http://192.168.1.10/x",
    "https://[::ffff:127.0.0.1]/x",
    "h".repeat(3000),
  ),
  fc.string({ maxLength: 40 }).filter((s) => !/^[a-z][a-z0-9+.-]*:/i.test(s)),
  notAString,
);
const validEvent = () => ({ id: `evt_fuzz_new_${Math.random().toString(36).slice(2)}`, type: "assignment.graded", data: { score: 1 } });
const validSub = () => ({ name: "Fuzz district", url: "https://fuzz.example.test/hooks", eventTypes: ["assignment.graded"] });

function body(name: string, fn: Route, method: string, path: string, b: unknown, extra: Partial<Fuzz> = {}): Fuzz {
  return { name, fn, method, path, role: "admin", body: json(b), contentType: "application/json", ...extra };
}

/** Bytes that are not a JSON document. */
const notJson = fc.oneof(
  fc.constantFrom("", "{", "}", "[1,2", '{"id": }', "{'id': 1}", "null x", "NaN", "\u0000", '{"a":1}{"b":2}', "[".repeat(5000), "\ufeff{}"),
  fc.string({ maxLength: 60 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
);

const eventRequests: fc.Arbitrary<Fuzz> = fc.oneof(
  badEventId.map((id) => body("event: bad id", events.POST, "POST", "/api/v1/events", { ...validEvent(), id })),
  badEventType.map((type) => body("event: bad type", events.POST, "POST", "/api/v1/events", { ...validEvent(), type })),
  notAnObject.map((data) => body("event: data not an object", events.POST, "POST", "/api/v1/events", { ...validEvent(), data })),
  fc.constantFrom("id", "type", "data").map((k) => {
    const e: Record<string, unknown> = validEvent();
    delete e[k];
    return body(`event: no ${k}`, events.POST, "POST", "/api/v1/events", e);
  }),
  fc
    .oneof(
      fc.constant({ "bad key": "x" }),
      fc.constant({ nested: { a: 1 } }),
      fc.constant({ k: "" }),
      fc.constant({ k: "v".repeat(201) }),
      fc.constant(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i]))),
      fc.constant(["tenant"]),
      fc.constant("lincoln"),
    )
    .map((subject) => body("event: bad subject", events.POST, "POST", "/api/v1/events", { ...validEvent(), subject })),
  fc
    .constantFrom("yesterday", "2026-13-01T00:00:00Z", "2026-11-29", 1700000000, "2026-11-29T10:00:00")
    .map((occurredAt) => body("event: bad occurredAt", events.POST, "POST", "/api/v1/events", { ...validEvent(), occurredAt })),
  junkKey.map((k) => ({
    ...body("event: unknown field", events.POST, "POST", "/api/v1/events", {}),
    body: `{"id":"evt_fuzz_x1","type":"assignment.graded","data":{},${json(k)}:1}`,
  })),
  notJson.map((raw) => ({ ...body("event: not JSON", events.POST, "POST", "/api/v1/events", null), body: raw })),
  fc
    .constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/json", "application/xml")
    .map((ct) => body("event: wrong content-type", events.POST, "POST", "/api/v1/events", validEvent(), { contentType: ct })),
  fc
    .integer({ min: 257, max: 400 })
    .map((kb) => body("event: over 256 KB", events.POST, "POST", "/api/v1/events", { ...validEvent(), data: { blob: "x".repeat(kb * 1024) } })),
  fc.constant(null).map(() => ({
    ...body("event: invalid UTF-8 bytes", events.POST, "POST", "/api/v1/events", null),
    body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]).buffer as ArrayBuffer,
  })),
  fc.constantFrom<Fuzz["role"]>("support", "none", "bad").map((role) => body(`event: as ${role}`, events.POST, "POST", "/api/v1/events", validEvent(), { role })),
);

const subscriptionRequests: fc.Arbitrary<Fuzz> = fc.oneof(
  badUrl.map((url) => body("subscription: bad url", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), url })),
  fc
    .oneof(
      fc.constant([]),
      fc.constant(["*", "Bad.Type"]),
      fc.constant("assignment.graded"),
      fc.array(badEventType, { minLength: 1, maxLength: 3 }),
      fc.constant(Array(101).fill("a.b")),
    )
    .map((eventTypes) => body("subscription: bad eventTypes", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), eventTypes })),
  fc
    .oneof(
      fc.constantFrom("", " ", "a".repeat(201)),
      notAString.filter((v) => typeof v !== "string"),
    )
    .map((name) => body("subscription: bad name", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), name })),
  fc
    .constantFrom("has space", "slash/id", "a".repeat(65), "", "ünï", "id;--")
    .map((id) => body("subscription: bad id", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), id })),
  fc.constant(null).map(() => body("subscription: id taken", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), id: SUB })),
  fc
    .constantFrom("secret", "whsec_", "whsec_!!!!", "whsec_" + Buffer.alloc(8).toString("base64"), "whsec_" + Buffer.alloc(65).toString("base64"))
    .map((secret) => body("subscription: bad secret", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), secret })),
  fc
    .oneof(
      fc.constant({ ladderSeconds: [] }),
      fc.constant({ ladderSeconds: [-1] }),
      fc.constant({ ladderSeconds: [1.5] }),
      fc.constant({ timeoutMs: 99 }),
      fc.constant({ timeoutMs: 120_001 }),
      fc.constant({ maxAgeSeconds: 0 }),
      fc.constant({ classify: { "200": "retry", "6xx": "retry" } }),
      fc.constant({ classify: { "503": "ignore" } }),
      fc.constant({ unknown: 1 }),
      fc.constant("fast"),
    )
    .map((retryPolicy) => body("subscription: bad retryPolicy", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), retryPolicy })),
  fc
    .record({ maxConcurrency: fc.constantFrom(0, -1, 1001, 2.5, "10") })
    .map((x) => body("subscription: bad maxConcurrency", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), ...x })),
  fc
    .record({ rateLimitPerSecond: fc.constantFrom(0, -5, 100_001, 0.5, "fast") })
    .map((x) => body("subscription: bad rateLimitPerSecond", subscriptions.POST, "POST", "/api/v1/subscriptions", { ...validSub(), ...x })),
  junkKey.map((k) => ({
    ...body("subscription: unknown field", subscriptions.POST, "POST", "/api/v1/subscriptions", null),
    body: `{"name":"x","url":"https://fuzz.example.test/h","eventTypes":["*"],${json(k)}:true}`,
  })),
  fc.constantFrom("name", "url", "eventTypes").map((k) => {
    const s: Record<string, unknown> = validSub();
    delete s[k];
    return body(`subscription: no ${k}`, subscriptions.POST, "POST", "/api/v1/subscriptions", s);
  }),
  notJson.map((raw) => ({ ...body("subscription: not JSON", subscriptions.POST, "POST", "/api/v1/subscriptions", null), body: raw })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "support", "none", "bad")
    .map((role) => body(`subscription: as ${role}`, subscriptions.POST, "POST", "/api/v1/subscriptions", validSub(), { role })),
  // PATCH: a bad body on the real subscription, or a good body on one that does not exist.
  fc
    .oneof(
      fc.constant({}),
      fc.constant({ reason: "only a reason" }),
      fc.constant({ state: "disabled" }),
      fc.constant({ state: "PAUSED" }),
      fc.constant({ state: null }),
      badUrl.map((url) => ({ url })),
      fc.constant({ eventTypes: [] }),
      fc.constant({ maxConcurrency: 0 }),
      fc.constant({ retryPolicy: { timeoutMs: 1 } }),
      fc.constant({ id: "renamed" }),
      fc.constant({ secret: "whsec_x" }),
      fc.constant({ reason: "x".repeat(501), state: "paused" }),
    )
    .map((b) => body("subscription PATCH: bad body", subscription.PATCH, "PATCH", `/api/v1/subscriptions/${SUB}`, b, { params: { id: SUB } })),
  fc
    .oneof(
      fc.constantFrom("sub_nope", "", "a".repeat(300), "../sub_fuzz", "sub_fuzz ", "SUB_FUZZ", "%00"),
      fc.string({ maxLength: 20 }).filter((s) => s !== SUB),
    )
    .map((id) =>
      body("subscription PATCH: no such subscription", subscription.PATCH, "PATCH", `/api/v1/subscriptions/x`, { state: "paused", reason: "fuzz" }, { params: { id } }),
    ),
  notJson.map((raw) => ({
    ...body("subscription PATCH: not JSON", subscription.PATCH, "PATCH", `/api/v1/subscriptions/${SUB}`, null, { params: { id: SUB } }),
    body: raw,
  })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "support", "none")
    .map((role) =>
      body(`subscription PATCH: as ${role}`, subscription.PATCH, "PATCH", `/api/v1/subscriptions/${SUB}`, { state: "paused" }, { params: { id: SUB }, role }),
    ),
);

/** Query strings with at least one certainly bad parameter. */
const badDeliveryQuery = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(
        "state=done",
        "state=DELIVERED",
        "state=",
        "limit=0",
        "limit=-1",
        "limit=201",
        "limit=abc",
        "limit=1.5",
        "limit=1e3",
        "cursor=abc",
        "cursor=dlv_zz",
        "cursor=" + "dlv_".padEnd(30, "0") + "x",
        "q=",
        "q=%20%20",
        "q=" + "x".repeat(201),
        "eventId=" + "e".repeat(201),
        "subscriptionId=sub_nope",
        "subscriptionId=" + "s".repeat(65),
        "sort=id",
        "page=2",
        "__proto__=1",
        "limit=10&limit=abc",
      ),
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => /^[a-z]+$/.test(k) && !["subscriptionId", "state", "eventId", "q", "cursor", "limit"].includes(k))
        .map((k) => `${k}=1`),
    ),
    fc.subarray(["state=delivered", "limit=10", `subscriptionId=${SUB}`, "q=evt_fuzz_1"], { maxLength: 2 }),
  )
  .map(([bad, good]) => [...good, bad].join("&"));

const deliveryRequests: fc.Arbitrary<Fuzz> = fc.oneof(
  badDeliveryQuery.map((q) => ({ name: "deliveries: bad query", fn: deliveries.GET, method: "GET", path: `/api/v1/deliveries?${q}`, role: "admin" as const })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "none", "bad")
    .map((role) => ({ name: `deliveries: as ${role}`, fn: deliveries.GET, method: "GET", path: "/api/v1/deliveries", role })),
  fc
    .oneof(fc.constantFrom("dlv_nope", "", "' OR 1=1 --", "a".repeat(500), "%", "dlv_" + "0".repeat(26)), fc.string({ maxLength: 30 }))
    .map((id) => ({ name: "delivery: no such id", fn: delivery.GET, method: "GET", path: "/api/v1/deliveries/x", params: { id }, role: "admin" as const })),
  // Single redrive: a bad body on the dead letter; a good one on a delivered row (409) or a missing one (404).
  fc
    .oneof(
      fc.constant({}),
      fc.constant({ reason: "" }),
      fc.constant({ reason: "ab" }),
      fc.constant({ reason: "   x  " }),
      fc.constant({ reason: 12345 }),
      fc.constant({ reason: "INC-1", force: true }),
    )
    .map((b) => body("delivery redrive: bad body", deliveryRedrive.POST, "POST", "/api/v1/deliveries/x/redrive", b, { params: { id: "DEAD" } })),
  fc
    .constantFrom("DELIVERED", "dlv_nope", "")
    .map((id) => body("delivery redrive: not redrivable", deliveryRedrive.POST, "POST", "/api/v1/deliveries/x/redrive", { reason: "INC-42 fuzz" }, { params: { id } })),
  notJson.map((raw) => ({
    ...body("delivery redrive: not JSON", deliveryRedrive.POST, "POST", "/api/v1/deliveries/x/redrive", null, { params: { id: "DEAD" } }),
    body: raw,
  })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "support", "none")
    .map((role) =>
      body(`delivery redrive: as ${role}`, deliveryRedrive.POST, "POST", "/api/v1/deliveries/x/redrive", { reason: "INC-42 fuzz" }, { params: { id: "DEAD" }, role }),
    ),
);

const redriveRequests: fc.Arbitrary<Fuzz> = fc.oneof(
  fc
    .oneof(
      fc.constant({ filter: { unknown: 1 } }),
      fc.constant({ filter: { statusCode: 99 } }),
      fc.constant({ filter: { statusCode: 600 } }),
      fc.constant({ filter: { statusCode: "422" } }),
      fc.constant({ filter: { deadLetteredFrom: "yesterday" } }),
      fc.constant({ filter: { deadLetteredFrom: "2026-11-29T10:00:00Z", deadLetteredTo: "2026-11-29T09:00:00Z" } }),
      fc.constant({ filter: { subscriptionId: "" } }),
      fc.constant({ filter: "all" }),
      fc.constant({ filter: null }),
    )
    .map((b) => body("redrive: bad filter", redrives.POST, "POST", "/api/v1/redrives", { reason: "INC-7 fuzz", ...b })),
  fc
    .oneof(
      fc.constant({}),
      fc.constant({ reason: "" }),
      fc.constant({ reason: "no" }),
      fc.constant({ reason: "x".repeat(501) }),
      fc.constant({ dryRun: false }),
      fc.constant({ reason: ["INC-1"] }),
    )
    .map((b) => body("redrive: bad reason", redrives.POST, "POST", "/api/v1/redrives", { filter: { subscriptionId: SUB }, ...b })),
  fc
    .constantFrom(0, -1, 5001, 1.5, "10", null)
    .map((ratePerSecond) => body("redrive: bad rate", redrives.POST, "POST", "/api/v1/redrives", { filter: {}, reason: "INC-7 fuzz", ratePerSecond })),
  fc.constantFrom("yes", 1, null).map((dryRun) => body("redrive: bad dryRun", redrives.POST, "POST", "/api/v1/redrives", { filter: {}, reason: "INC-7 fuzz", dryRun })),
  // Well-formed but aimed at nothing: a missing subscription (400) or a filter matching no dead letter (409, rolled back).
  fc
    .oneof(
      fc.constant({ subscriptionId: "sub_nope" }),
      fc.constant({ statusCode: 599 }),
      fc.constant({ errorClass: "no_such_class" }),
      fc.constant({ deadLetterReason: "gone" }),
      fc.constant({ deadLetteredFrom: "2030-01-01T00:00:00Z" }),
      fc.constant({ subscriptionId: SUB, statusCode: 500 }),
    )
    .map((filter) => body("redrive: matches nothing", redrives.POST, "POST", "/api/v1/redrives", { filter, reason: "INC-7 fuzz", ratePerSecond: 10 })),
  junkKey.map((k) => ({ ...body("redrive: unknown field", redrives.POST, "POST", "/api/v1/redrives", null), body: `{"filter":{},"reason":"INC-7 fuzz",${json(k)}:1}` })),
  notJson.map((raw) => ({ ...body("redrive: not JSON", redrives.POST, "POST", "/api/v1/redrives", null), body: raw })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "support", "none", "bad")
    .map((role) => body(`redrive: as ${role}`, redrives.POST, "POST", "/api/v1/redrives", { filter: {}, reason: "INC-7 fuzz" }, { role })),
  fc
    .constantFrom("status=finished", "status=", "limit=0", "limit=501", "limit=x", "foo=bar", "status=RUNNING", "cursor=junk", "cursor=", `cursor=${"W".repeat(1001)}`)
    .map((q) => ({ name: "redrives: bad query", fn: redrives.GET, method: "GET", path: `/api/v1/redrives?${q}`, role: "admin" as const })),
  fc
    .oneof(fc.constantFrom("rdb_nope", "", "1; DROP TABLE redrive_batches", "a".repeat(300)), fc.string({ maxLength: 30 }))
    .map((id) => ({ name: "redrive: no such batch", fn: redrive.GET, method: "GET", path: "/api/v1/redrives/x", params: { id }, role: "admin" as const })),
  // Cancel: a missing batch (404), a finished one (409), a bad body (400).
  fc
    .constantFrom("rdb_nope", "BATCH", "")
    .map((id) => body("redrive cancel: not cancellable", redriveCancel.POST, "POST", "/api/v1/redrives/x/cancel", { reason: "fuzz" }, { params: { id } })),
  fc
    .oneof(fc.constant({ reason: 5 }), fc.constant({ reason: "x".repeat(501) }), fc.constant({ why: "x" }), fc.constant([]))
    .map((b) => body("redrive cancel: bad body", redriveCancel.POST, "POST", "/api/v1/redrives/x/cancel", b, { params: { id: "BATCH" } })),
  notJson
    .filter((s) => s.length > 0)
    .map((raw) => ({ ...body("redrive cancel: not JSON", redriveCancel.POST, "POST", "/api/v1/redrives/x/cancel", null, { params: { id: "BATCH" } }), body: raw })),
  fc
    .constantFrom<Fuzz["role"]>("producer", "support", "none")
    .map((role) => body(`redrive cancel: as ${role}`, redriveCancel.POST, "POST", "/api/v1/redrives/x/cancel", {}, { params: { id: "BATCH" }, role })),
);

const anyBadRequest = fc.oneof(eventRequests, subscriptionRequests, deliveryRequests, redriveRequests);

async function send(f: Fuzz): Promise<{ status: number; text: string }> {
  const params = Object.fromEntries(
    Object.entries(f.params ?? {}).map(([k, v]) => [k, v === "DEAD" ? deadId : v === "DELIVERED" ? deliveredId : v === "BATCH" ? batchId : v]),
  );
  const headers: Record<string, string> = {};
  if (f.role === "bad") headers.authorization = "Bearer hl_not_a_real_token";
  else if (f.role !== "none") headers.authorization = `Bearer ${tokens[f.role]}`;
  if (f.body !== undefined && f.contentType) headers["content-type"] = f.contentType;
  const req = new Request(`http://localhost${f.path}`, { method: f.method, headers, body: f.body });
  const res = await f.fn(req, { params: Promise.resolve(params) });
  return { status: res.status, text: await res.text() };
}

describe("bad-input sweep over the public API", () => {
  it(`${RUNS} generated malformed requests: only 4xx with the error envelope, never a 500, and the database unchanged`, async () => {
    const samples = fc.sample(anyBadRequest, { numRuns: RUNS, seed: SEED });
    expect(samples).toHaveLength(RUNS);
    const before = await snapshot(db.pool);
    const wrong: string[] = [];
    const byStatus: Record<number, number> = {};
    const byName = new Map<string, number>();
    for (const [i, f] of samples.entries()) {
      const r = await send(f);
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      byName.set(f.name, (byName.get(f.name) ?? 0) + 1);
      let code: unknown;
      try {
        code = JSON.parse(r.text)?.error?.code;
      } catch {
        code = undefined;
      }
      if (r.status < 400 || r.status >= 500 || typeof code !== "string") {
        const shown = typeof f.body === "string" ? f.body.slice(0, 200) : f.body ? `<${f.body.byteLength} bytes>` : "";
        wrong.push(`#${i} ${f.name}: ${f.method} ${f.path} params=${JSON.stringify(f.params ?? {})} as ${f.role} body=${shown} → ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    // findTokenPrincipal touches last_used_at without waiting; let it land before comparing (it is excluded anyway).
    await new Promise((r) => setTimeout(r, 200));
    const after = await snapshot(db.pool);
    expect(wrong, `seed ${SEED}: requests not answered 4xx with an error code`).toEqual([]);
    expect(after, `seed ${SEED}: the sweep changed the database`).toEqual(before);
    // The sweep must actually cover every family of routes and error.
    expect(byName.size).toBeGreaterThan(60);
    for (const s of [400, 401, 403, 404, 409, 413, 415]) expect(byStatus[s] ?? 0, `answers with ${s}`).toBeGreaterThan(0);
  });
});

// Deep nesting: a few KB of brackets must not reach JSON.stringify's recursion
// limit (a RangeError, formerly a 500). Refused as bad input naming the depth.
const nested = (depth: number, open: string, close: string, inner = "1") => open.repeat(depth) + inner + close.repeat(depth);

describe("nesting bombs", () => {
  it("deeply nested event data → 400 naming the depth, nothing written", async () => {
    const before = await snapshot(db.pool);
    const cases = [
      `{"id":"evt_bomb_1","type":"assignment.graded","data":{"a":${nested(5000, "[", "]")}}}`,
      `{"id":"evt_bomb_2","type":"assignment.graded","data":${nested(5000, '{"a":', "}")}}`,
      `{"id":"evt_bomb_3","type":"assignment.graded","data":{"a":${nested(100_000, "[", "]")}}}`,
      `{"id":"evt_bomb_4","type":"assignment.graded","data":{"a":${nested(65, "[", "]")}}}`,
    ];
    for (const raw of cases) {
      const r = await send({ name: "bomb", fn: events.POST, method: "POST", path: "/api/v1/events", role: "producer", body: raw, contentType: "application/json" });
      expect(r.status, `${raw.slice(0, 60)}… → ${r.text.slice(0, 200)}`).toBe(400);
      expect(JSON.parse(r.text).error.message).toMatch(/nested \d+ levels deep; the limit is \d+/);
    }
    expect(await snapshot(db.pool)).toEqual(before);
  });

  it("data nested to the limit is accepted", async () => {
    const raw = `{"id":"evt_deep_ok","type":"assignment.graded","data":{"a":${nested(63, "[", "]")}}}`;
    const r = await send({ name: "deep ok", fn: events.POST, method: "POST", path: "/api/v1/events", role: "producer", body: raw, contentType: "application/json" });
    expect(r.status, r.text).toBeLessThan(300);
  });

  it("a bare bracket bomb on every JSON route → 4xx, never a 500", async () => {
    const bomb = nested(200_000, "[", "]").slice(0, 250_000);
    const routes: [Route, string, string, Record<string, string>?][] = [
      [events.POST, "POST", "/api/v1/events"],
      [subscriptions.POST, "POST", "/api/v1/subscriptions"],
      [subscription.PATCH, "PATCH", "/api/v1/subscriptions/x", { id: SUB }],
      [redrives.POST, "POST", "/api/v1/redrives"],
      [deliveryRedrive.POST, "POST", "/api/v1/deliveries/x/redrive", { id: "DEAD" }],
    ];
    for (const [fn, method, path, params] of routes) {
      for (const raw of [bomb, `{"filter":${nested(5000, '{"a":', "}")},"reason":"INC-1 fuzz"}`, `{"name":${nested(5000, "[", "]")}}`]) {
        const r = await send({ name: "bomb", fn, method, path, params, role: "admin", body: raw, contentType: "application/json" });
        expect(r.status, `${path} ${raw.slice(0, 40)} → ${r.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${path} ${raw.slice(0, 40)} → ${r.text.slice(0, 200)}`).toBeLessThan(500);
      }
    }
  });
});

describe("toErrorResponse", () => {
  it("a RangeError (recursion or size limit hit on the input) is a 400, not a 500", async () => {
    const { toErrorResponse } = await import("../../lib/api/handler");
    const r = toErrorResponse(new RangeError("Maximum call stack size exceeded"));
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe("bad_request");
  });
});
