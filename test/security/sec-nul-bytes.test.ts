// U+0000 (NUL) in a request. PostgreSQL stores and compares no NUL in text or
// jsonb (SQLSTATE 22021), so a NUL that reaches a query fails it: a 500 for a
// caller's typo. The refusal sits where every request passes:
// - /api/v1: apiRoute (lib/api/handler.ts) refuses a NUL in the path (its
//   parameters) and the query string, and readJson one in any string or key
//   of a JSON body, naming the field; the events routes keep their own checks
//   (an event's data is stored as bytes and may hold \u0000).
// - pages, /portal/open and /api/health: the proxy (proxy.ts) refuses a NUL in
//   the address before any page runs.
// - anything that still reaches the database with one (the sign-in form, a
//   caller that bypasses both) is a 400, not a 500, through toErrorResponse.
//
// The API cases are generated from the route files (test/helpers/client-server.ts
// v1RouteFiles) and the OpenAPI document's query parameters: every path
// parameter, every documented query parameter plus an undocumented one, and
// every string and key of a valid body for every route that reads one. Each
// must be a 4xx with the error envelope and change nothing (every table's row
// count and contents compared before and after).
import fs from "node:fs";
import path from "node:path";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { v1RouteFiles } from "../helpers/client-server";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import { API_OPERATIONS, openApiDocument } from "../../lib/api/openapi";
import { toErrorResponse } from "../../lib/api/handler";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { archiveSubscription } from "../../lib/subscriptions/archive";
import { SYSTEM } from "../../lib/auth/principal";
import { clearTokenCache } from "../../lib/auth/tokens";
import { createUser } from "../../lib/auth/users";
import { newSession, sessionSetCookies } from "../../lib/auth/cookies";
import { handleSignIn } from "../../lib/auth/signin";
import { proxy } from "../../proxy";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
const T = "lincoln";
const SUB = "sub_nul";
const SUB_ARCHIVED = "sub_nul_archived";
const EVENT_TYPE = "assignment.graded";
const since = new Date(Date.now() - 7 * 86400_000).toISOString();
const until = new Date(Date.now() - 60_000).toISOString();
const reason = "nul probe";

let db: TestDb;
let admin: string;
const ids = { dlvDead: "", dlvDelivered: "", batch: "", secret: "", event: "evt_nul_seed" };

type RouteFn = Parameters<typeof call>[0];
const routes = new Map<string, { rel: string; method: string; fn: RouteFn }>();

/** A NUL inside a string (after its first character, so the rest of it is still a plausible value). */
const withNul = (s: string) => (s.length ? `${s.slice(0, 1)}\u0000${s.slice(1)}` : "\u0000");

let eventSeq = 0;
const event = () => ({
  id: `evt_nul_${++eventSeq}`,
  type: EVENT_TYPE,
  data: { score: "A-", detail: { comment: "well done", tags: ["late"] } },
  subject: { tenant: T, studentId: "stu_1" },
  occurredAt: since,
});
const jsonSchema = { type: "object", properties: { score: { type: "string" } } };

/**
 * A body each route accepts as a global admin (checked against its schema below), so a probe
 * with a NUL in one of its strings reaches past validation into the service and the database.
 * Every route that reads a JSON body needs one here.
 */
function sampleBodies(): Record<string, () => unknown> {
  return {
    "deliveries/[id]/redrive:POST": () => ({ reason }),
    "deliveries/[id]/resend:POST": () => ({ reason }),
    "deliveries/[id]/resolve:POST": () => ({ resolution: "fixed_at_source", reason, correctedEventId: ids.event }),
    "dlq/resolve:POST": () => ({
      filter: { subscriptionId: SUB, deadLetterReason: "permanent", errorClass: "http_4xx", deadLetteredFrom: since },
      resolution: "discarded",
      reason,
    }),
    "erasures:POST": () => ({ subject: { studentId: "stu_1" }, tenant: T, reason }),
    "events:POST": event,
    "events/batch:POST": () => ({ events: [event()] }),
    "event-types:POST": () => ({ type: "course.created", description: "A course", schema: jsonSchema, example: { score: "A" }, summaryFields: ["/score"] }),
    "event-types/[type]:PUT": () => ({ description: "A grade", schema: jsonSchema, example: { score: "B" }, summaryFields: ["/score"] }),
    "notifications/settings:PUT": () => ({ dlqThreshold: 5 }),
    "portal/sessions:POST": () => ({ tenant: T, subscriptionId: SUB }),
    "redrives:POST": () => ({ filter: { subscriptionId: SUB, deadLetterReason: "permanent", errorClass: "http_4xx", deadLetteredFrom: since }, reason }),
    "redrives/[id]/cancel:POST": () => ({ reason }),
    "retention:PUT": () => ({ tenant: T, retentionDays: 30 }),
    "retention/run:POST": () => ({ dryRun: true }),
    "subscriptions:POST": () => ({
      id: "sub_nul_new",
      name: "Lincoln LMS",
      url: "https://lms.lincoln.example.test/h",
      eventTypes: [EVENT_TYPE],
      tenant: T,
      headers: { "X-District": "lincoln" },
    }),
    "subscriptions/[id]:PATCH": () => ({ name: "Lincoln SIS", eventTypes: [EVENT_TYPE], headers: { "X-District": "lincoln" }, state: "paused", reason }),
    "subscriptions/[id]/archive:POST": () => ({ reason }),
    "subscriptions/[id]/unarchive:POST": () => ({ reason }),
    "subscriptions/[id]/backfill:POST": () => ({ since, until, reason }),
    "subscriptions/[id]/recover:POST": () => ({ since, until, reason, states: ["dead_letter"] }),
    "subscriptions/[id]/secrets:POST": () => ({ overlapSeconds: 60, reason }),
    "subscriptions/[id]/test:POST": () => ({ eventId: ids.event }),
    "tenants:POST": () => ({ id: "qat", name: "QA tenant" }),
    "tenants/[id]/contacts:PUT": () => ({ emails: ["it@lincoln.example"], webhookUrl: "https://hooks.lincoln.example/x", dlqThreshold: 3 }),
  };
}

/** A real row for each path parameter, so only the NUL differs from a call that works. */
function realParam(rel: string, name: string): string {
  if (name === "secretId") return ids.secret;
  if (name === "type") return EVENT_TYPE;
  if (rel === "deliveries/[id]/resend") return ids.dlvDelivered;
  if (rel.startsWith("deliveries/") || rel.startsWith("dashboard/deliveries/")) return ids.dlvDead;
  if (rel.startsWith("redrives/")) return ids.batch;
  if (rel.startsWith("tenants/")) return T;
  if (rel.startsWith("portal/")) return "ps_0000000000000000";
  if (rel.startsWith("subscriptions/[id]/unarchive")) return SUB_ARCHIVED;
  return SUB;
}

const paramNames = (rel: string) => [...rel.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]);
const fillPath = (rel: string, params: Record<string, string>) => `/api/v1/${rel.replace(/\[([^\]]+)\]/g, (_m, n: string) => encodeURIComponent(params[n]))}`;

/** The query parameters the OpenAPI document gives the route's method. */
function documentedQuery(rel: string, method: string): string[] {
  const doc = openApiDocument() as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
  const op = doc.paths[`/api/v1/${rel.replace(/\[([^\]]+)\]/g, "{$1}")}`]?.[method.toLowerCase()];
  return (op?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
}

/** Every table's row count and contents (api_tokens: count only, a call stamps its token's last use). */
async function snapshot(): Promise<Record<string, string>> {
  const tables = (
    await db.pool.query<{ t: string }>(
      `SELECT c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname NOT LIKE '\\_prisma%' ORDER BY 1`,
    )
  ).rows.map((r) => r.t);
  const parts = tables.map((t) =>
    t === "api_tokens"
      ? `SELECT '${t}' AS t, count(*)::text AS h FROM ${t}`
      : `SELECT '${t}' AS t, count(*) || ':' || md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${t} x`,
  );
  const rows = (await db.pool.query<{ t: string; h: string }>(parts.join(" UNION ALL "))).rows;
  return Object.fromEntries(rows.map((r) => [r.t, r.h]));
}

function changed(a: Record<string, string>, b: Record<string, string>): string[] {
  return Object.keys({ ...a, ...b }).filter((k) => a[k] !== b[k]);
}

type Probe = { key: string; name: string; path: string; params: Record<string, string>; body?: unknown; where: string };

/** A NUL in each path parameter, one at a time, the others real. */
function pathProbes(): Probe[] {
  const out: Probe[] = [];
  const bodies = sampleBodies();
  for (const [key, r] of routes) {
    for (const name of paramNames(r.rel)) {
      const params = Object.fromEntries(paramNames(r.rel).map((n) => [n, realParam(r.rel, n)]));
      params[name] = withNul(params[name]);
      out.push({ key, name: `path parameter ${name}`, path: fillPath(r.rel, params), params, body: bodies[key]?.(), where: `params.${name}` });
    }
  }
  return out;
}

/** A NUL in each documented query parameter, and in one no route reads (x). */
function queryProbes(): Probe[] {
  const out: Probe[] = [];
  const bodies = sampleBodies();
  for (const [key, r] of routes) {
    const params = Object.fromEntries(paramNames(r.rel).map((n) => [n, realParam(r.rel, n)]));
    for (const q of [...documentedQuery(r.rel, r.method), "x"])
      out.push({ key, name: `query ${q}`, path: `${fillPath(r.rel, params)}?${q}=a%00b`, params, body: bodies[key]?.(), where: `query.${q}` });
  }
  return out;
}

type Variant = { where: string; body: unknown; underData: boolean };

/** An event's data (single or in a batch): stored as bytes, where a NUL is allowed. */
const inData = (trail: (string | number)[]) => trail[0] === "data" || (trail[0] === "events" && trail[2] === "data");

/** `body` with a NUL put into one string or one key, for each string and key in it, in document order. */
function nulVariants(body: unknown): Variant[] {
  const out: Variant[] = [];
  const at = (trail: (string | number)[]) => ["body", ...trail].join(".").replaceAll("\u0000", "\\u0000");
  const walk = (node: unknown, trail: (string | number)[], replace: (v: unknown) => unknown) => {
    if (typeof node === "string") out.push({ where: at(trail), body: replace(withNul(node)), underData: inData(trail) });
    else if (Array.isArray(node)) node.forEach((v, i) => walk(v, [...trail, i], (nv) => replace(node.map((x, j) => (j === i ? nv : x)))));
    else if (node && typeof node === "object") {
      const entries = Object.entries(node);
      for (const [k, v] of entries) {
        const renamed = withNul(k);
        const body = replace(Object.fromEntries(entries.map(([k2, v2]) => [k2 === k ? renamed : k2, v2])));
        out.push({ where: at([...trail, renamed]), body, underData: inData(trail) });
        walk(v, [...trail, k], (nv) => replace({ ...(node as Record<string, unknown>), [k]: nv }));
      }
    }
  };
  walk(body, [], (v) => v);
  return out;
}

/**
 * Every string and key of every route's sample body, a NUL in each in turn (path parameters real).
 * A fresh sample for each, so each published event has an id of its own.
 */
function bodyProbes(): (Probe & { underData: boolean })[] {
  const out: (Probe & { underData: boolean })[] = [];
  for (const [key, sample] of Object.entries(sampleBodies())) {
    const r = routes.get(key);
    if (!r) continue;
    const params = Object.fromEntries(paramNames(r.rel).map((n) => [n, realParam(r.rel, n)]));
    const n = nulVariants(sample()).length;
    for (let i = 0; i < n; i++) {
      const v = nulVariants(sample())[i];
      out.push({ key, name: `body ${v.where}`, path: fillPath(r.rel, params), params, body: v.body, where: v.where, underData: v.underData });
    }
  }
  return out;
}

beforeAll(async () => {
  db = await createTestDatabase();
  clearTokenCache();
  admin = await tokenFor(db.prisma, "admin");
  for (const file of v1RouteFiles()) {
    const mod = await import(/* @vite-ignore */ path.resolve(file));
    const rel = path.dirname(path.relative("app/api/v1", file)).split(path.sep).join("/");
    for (const m of METHODS) if (typeof mod[m] === "function") routes.set(`${rel}:${m}`, { rel, method: m, fn: mod[m] });
  }
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ($1, 'Lincoln USD')", [T]);
  await db.pool.query("INSERT INTO event_types (type, description, created_by, updated_by) VALUES ($1, 'A grade', 'system', 'system')", [EVENT_TYPE]);
  for (const id of [SUB, SUB_ARCHIVED])
    await createSubscription(db.prisma, { id, name: id, url: `https://${id}.example.test/h`, eventTypes: [EVENT_TYPE], tenant: T }, SYSTEM);
  await archiveSubscription(db.prisma, SUB_ARCHIVED, { reason: "archived for the probe" }, SYSTEM);
  const at = new Date(Date.now() - 3600_000);
  await seedEvent(db.pool, { id: ids.event, subject: { tenant: T, studentId: "stu_1" } });
  await seedEvent(db.pool, { id: "evt_nul_seed_2", subject: { tenant: T, studentId: "stu_1" } });
  ids.dlvDead = await seedDelivery(db.pool, {
    subscriptionId: SUB,
    eventId: ids.event,
    state: "dead_letter",
    reason: "permanent",
    attempts: [{ at, status: 422, errorClass: "http_4xx", outcome: "dead_letter", excerpt: "missing field" }],
  });
  ids.dlvDelivered = await seedDelivery(db.pool, {
    subscriptionId: SUB,
    eventId: "evt_nul_seed_2",
    state: "delivered",
    attempts: [{ at, status: 200, outcome: "delivered" }],
  });
  ids.secret = (await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = $1", [SUB])).rows[0].id;
  ids.batch = (
    await db.pool.query(
      `INSERT INTO redrive_batches (filter, reason, actor, rate_per_second, matched, tenant_id) VALUES ($1, 'a batch', 'user:admin@hq', 10, 1, $2) RETURNING id`,
      [JSON.stringify({ subscriptionId: SUB }), T],
    )
  ).rows[0].id;
  await db.pool.query("INSERT INTO redrive_batch_items (batch_id, seq, delivery_id) VALUES ($1, 1, $2)", [ids.batch, ids.dlvDead]);
});
afterAll(async () => db?.close());

/** Runs each probe; returns what went wrong (an empty list passes). */
async function run(probes: Probe[], expectStatus: (p: Probe, r: Awaited<ReturnType<typeof call>>, wrote: string[]) => string | null): Promise<string[]> {
  const problems: string[] = [];
  for (const p of probes) {
    const r0 = routes.get(p.key)!;
    const before = await snapshot();
    const r = await call(r0.fn, { method: r0.method, path: p.path, token: admin, params: p.params, body: p.body });
    const wrote = changed(before, await snapshot());
    const label = `${r0.method} /api/v1/${r0.rel} (${p.name}) → ${r.status} ${r.text.slice(0, 160)}`;
    const problem = expectStatus(p, r, wrote);
    if (problem) problems.push(`${label}: ${problem}`);
  }
  return problems;
}

/**
 * A 400 naming where the NUL was, in the error envelope, and nothing written. A route outside
 * apiRoute (no `.permission`: openapi.json, a fixed document that reads no database) need only
 * not fail and write nothing.
 */
function refused(p: Probe, r: Awaited<ReturnType<typeof call>>, wrote: string[]): string | null {
  if (wrote.length) return `wrote ${wrote.join(", ")}`;
  if (!("permission" in routes.get(p.key)!.fn)) return r.status < 500 ? null : "server error";
  if (r.status !== 400) return "expected 400";
  const e = r.json?.error;
  if (!e || typeof e.code !== "string" || typeof e.message !== "string" || !("details" in e)) return "not the error envelope";
  if (e.code !== "validation_failed") return `code ${e.code}`;
  if (!e.message.startsWith(`${p.where}: `)) return `message does not name ${p.where}`;
  if (!/NUL/.test(e.message)) return "message does not say NUL";
  if (!Array.isArray(e.details) || e.details[0]?.path !== p.where) return "details do not name the field";
  return null;
}

describe("the route list", () => {
  it("every route that reads a JSON body has a sample body, and each sample passes its route's schema", () => {
    const bodies = sampleBodies();
    const withBody = [...routes.entries()].filter(([, r]) => {
      const doc = openApiDocument() as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
      return doc.paths[`/api/v1/${r.rel.replace(/\[([^\]]+)\]/g, "{$1}")}`]?.[r.method.toLowerCase()]?.requestBody;
    });
    expect(withBody.map(([k]) => k).filter((k) => !bodies[k])).toEqual([]);
    expect(Object.keys(bodies).filter((k) => !routes.has(k))).toEqual([]);
    // A route file that reads a body but is missing from the document would slip past the list above.
    const readers = v1RouteFiles().filter((f) => fs.readFileSync(f, "utf8").includes("readJson("));
    const covered = new Set(Object.keys(bodies).map((k) => routes.get(k)!.rel));
    expect(readers.map((f) => path.dirname(path.relative("app/api/v1", f)).split(path.sep).join("/")).filter((rel) => !covered.has(rel))).toEqual([]);
    const invalid: string[] = [];
    for (const [key, sample] of Object.entries(bodies)) {
      const r = routes.get(key)!;
      const op = API_OPERATIONS.find((o) => o.path === `/api/v1/${r.rel.replace(/\[([^\]]+)\]/g, "{$1}")}` && o.method === r.method.toLowerCase());
      const parsed = (op?.body as ZodType | undefined)?.safeParse(sample());
      if (!parsed?.success) invalid.push(`${key}: ${parsed ? parsed.error.message : "no schema"}`);
    }
    expect(invalid).toEqual([]);
  });
});

describe("/api/v1: a NUL in the address", () => {
  it("in any path parameter of any route is a 400 naming it, and writes nothing", async () => {
    const probes = pathProbes();
    expect(probes.length).toBeGreaterThan(20);
    expect(await run(probes, refused)).toEqual([]);
  });

  it("in any documented query parameter, or an unread one, of any route is a 400 naming it, and writes nothing", async () => {
    const probes = queryProbes();
    expect(probes.length).toBeGreaterThan(routes.size);
    expect(await run(probes, refused)).toEqual([]);
  });

  it("the reported addresses: the API answers 400, never 500", async () => {
    const get = (key: string) => routes.get(key)!;
    for (const [key, p, params] of [
      ["deliveries/[id]:GET", "/api/v1/deliveries/%00", { id: "\u0000" }],
      ["deliveries:GET", "/api/v1/deliveries?q=a%00b", {}],
      ["deliveries:GET", "/api/v1/deliveries?eventId=a%00b", {}],
      ["deliveries:GET", "/api/v1/deliveries?subscriptionId=a%00b", {}],
      ["subscriptions:GET", "/api/v1/subscriptions?tenant=a%00b", {}],
      ["subscriptions:GET", "/api/v1/subscriptions?q=a%00b", {}],
      ["dlq:GET", "/api/v1/dlq?subscriptionId=a%00b", {}],
      ["dashboard/lookup:GET", "/api/v1/dashboard/lookup?q=a%00b", {}],
      // As Next hands it over: the raw address and the decoded parameter.
      ["subscriptions/[id]:GET", "/api/v1/subscriptions/a%00b", { id: "a\u0000b" }],
      // The address alone (a caller that passes no parameters) is refused too.
      ["subscriptions:GET", "/api/v1/subscriptions/a%00b", {}],
    ] as const) {
      const r = await call(get(key).fn, { method: "GET", path: p, token: admin, params });
      expect(r.status, `${p}: ${r.text}`).toBe(400);
      expect(r.json.error.message).toMatch(/NUL character \(%00\)/);
    }
  });

  it("is refused before the credentials are looked at: no token, still a 400 (a malformed request, not a login)", async () => {
    const r = await call(routes.get("deliveries:GET")!.fn, { method: "GET", path: "/api/v1/deliveries?q=a%00b" });
    expect(r.status).toBe(400);
    const ok = await call(routes.get("deliveries:GET")!.fn, { method: "GET", path: "/api/v1/deliveries?q=ab" });
    expect(ok.status).toBe(401);
  });

  it("an encoded percent sign (%2500) is text, not a NUL: answered as before", async () => {
    const r = await call(routes.get("deliveries:GET")!.fn, { method: "GET", path: "/api/v1/deliveries?q=a%2500b", token: admin });
    expect(r.status, r.text).toBe(200);
  });
});

describe("/api/v1: a NUL in a JSON body", () => {
  it("in any string or key of any route's body (the events' data aside) is a 400 naming the field, and writes nothing", async () => {
    const probes = bodyProbes().filter((p) => !p.key.startsWith("events"));
    expect(probes.length).toBeGreaterThan(60);
    expect(await run(probes, refused)).toEqual([]);
  });

  it("the reported bodies: 400 naming the field", async () => {
    const tenants = await call(routes.get("tenants:POST")!.fn, { method: "POST", token: admin, body: { id: "qat", name: "x\u0000y" } });
    expect(tenants.status, tenants.text).toBe(400);
    expect(tenants.json.error).toMatchObject({ code: "validation_failed", message: "body.name: NUL characters (\\u0000) are not allowed" });
    expect(tenants.json.error.details).toEqual([{ path: "body.name", message: "NUL characters (\\u0000) are not allowed" }]);
    const patch = await call(routes.get("subscriptions/[id]:PATCH")!.fn, { method: "PATCH", token: admin, params: { id: SUB }, body: { name: "x\u0000y" } });
    expect(patch.status, patch.text).toBe(400);
    const portal = await call(routes.get("portal/sessions:POST")!.fn, { method: "POST", token: admin, body: { tenant: "a\u0000b" } });
    expect(portal.status, portal.text).toBe(400);
    // Deep, and in a key: each is named.
    const deep = await call(routes.get("event-types:POST")!.fn, {
      method: "POST",
      token: admin,
      body: { type: "course.created", description: "x", schema: { properties: { "ti\u0000tle": { type: "string" } } }, example: { a: [1, "b\u0000"] } },
    });
    expect(deep.status, deep.text).toBe(400);
    expect(deep.json.error.details.map((d: { path: string }) => d.path)).toEqual(["body.schema.properties.ti\\u0000tle", "body.example.a.1"]);
  });

  it("events: a NUL in data is published and delivered as before (stored as bytes); anywhere else it is refused as before, and never a 500", async () => {
    const probes = bodyProbes().filter((p) => p.key.startsWith("events"));
    expect(probes.length).toBeGreaterThan(10);
    const problems = await run(probes, (p, r, wrote) => {
      const q = p as Probe & { underData: boolean };
      if (r.status >= 500) return "server error";
      if (q.underData) return r.status === 202 || r.status === 200 ? null : "data with a NUL was refused";
      if (wrote.length) return `wrote ${wrote.join(", ")}`;
      if (p.key === "events/batch:POST" && r.status === 200) return r.json.results?.[0]?.error?.code === "validation_failed" ? null : "the event was not refused";
      return r.status === 400 ? null : "expected 400";
    });
    expect(problems).toEqual([]);
    const stored = await db.pool.query("SELECT id FROM events WHERE position('\\u0000' in convert_from(payload, 'UTF8')) > 0");
    expect(stored.rowCount).toBe(probes.filter((p) => p.underData).length);
  });
});

describe("the database's refusal, wherever it still surfaces", () => {
  it("SQLSTATE 22021 from pg and from Prisma, and 22P05, are a 400, not a 500; other database errors stay a 500", async () => {
    const pgErr = await db.pool.query("SELECT $1::text", ["a\u0000b"]).catch((e: unknown) => e);
    const prismaErr = await db.prisma.tenant.create({ data: { id: "nul_t", name: "a\u0000b" } }).catch((e: unknown) => e);
    const untranslatable = Object.assign(new Error('character with byte sequence 0xe2 0x82 0xac in encoding "UTF8" has no equivalent in encoding "LATIN1"'), {
      code: "22P05",
    });
    for (const err of [pgErr, prismaErr, untranslatable]) {
      const res = toErrorResponse(err);
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe("bad_request");
      expect(body.error.message).toMatch(/cannot store/);
    }
    const other = await db.pool.query("SELECT 1/0").catch((e: unknown) => e);
    expect(toErrorResponse(other).status).toBe(500);
  });

  it("the sign-in form (outside apiRoute) with a NUL in the email: a 400, and no attempt recorded", async () => {
    const before = await snapshot();
    const r = await call(handleSignIn, {
      path: "/api/auth/signin",
      body: { email: "a\u0000b@hq.example", password: "x" },
      headers: { origin: "http://localhost", host: "localhost", "sec-fetch-site": "same-origin" },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe("bad_request");
    expect(changed(before, await snapshot())).toEqual([]);
  });
});

/** app/(dashboard)/subscriptions/[id]/page.tsx → /subscriptions/[id] */
function pagePaths(dir = "app"): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...pagePaths(p));
    else if (e.name === "page.tsx")
      out.push(
        "/" +
          path
            .relative("app", dir)
            .split(path.sep)
            .filter((s) => s && !/^\(.*\)$/.test(s))
            .join("/"),
      );
  }
  return out.sort();
}

describe("pages, the portal link and health: the proxy", () => {
  let person = "";
  beforeAll(async () => {
    const u = await createUser(db.prisma, { email: "nul@hq.example", role: "admin", password: "correct horse battery" });
    person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
  });
  const viaProxy = (p: string, cookie?: string) => proxy(new NextRequest(`http://localhost:3000${p}`, { headers: cookie ? { cookie } : {} }));

  function addresses(): string[] {
    const out: string[] = [];
    for (const page of pagePaths()) {
      const real = page.replace(/\[[^\]]+\]/g, "x");
      if (page !== real) out.push(page.replace(/\[[^\]]+\]/g, "a%00b"));
      out.push(`${real}?q=a%00b`);
    }
    return [
      ...out,
      "/?q=a%00b",
      "/subscriptions?tenant=a%00b",
      "/audit?actor=a%00b",
      "/dlq/redrive?subscriptionId=a%00b",
      "/subscriptions/a%00b",
      "/portal/open?token=a%00b",
      "/signin?next=%2F%00",
    ];
  }

  it("every page, with a NUL in a path parameter or the query, signed in or not: 400 before the page runs", async () => {
    const pages = pagePaths();
    expect(pages.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const a of addresses())
      for (const cookie of [person, undefined]) {
        const res = await viaProxy(a, cookie);
        const text = await res.text();
        if (res.status !== 400 || !/NUL character \(%00\)/.test(text))
          problems.push(`${a} (${cookie ? "signed in" : "anonymous"}) → ${res.status} ${text.slice(0, 120)}`);
        else if (!res.headers.get("content-security-policy") || res.headers.get("x-frame-options") !== "DENY") problems.push(`${a}: the usual headers are missing`);
      }
    expect(problems).toEqual([]);
  });

  it("/api/health with a NUL: 400 with the API's error envelope", async () => {
    const res = await viaProxy("/api/health?scope=a%00b");
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: "validation_failed", details: [{ path: "query.scope" }] });
    expect(body.error.message).toMatch(/^query\.scope: .*NUL/);
  });

  it("the same addresses without the NUL are served as before", async () => {
    for (const a of ["/?q=ab", "/subscriptions?tenant=ab", "/subscriptions/ab", "/audit?actor=ab"]) {
      expect((await viaProxy(a, person)).status, a).toBe(200);
      expect((await viaProxy(a)).status, a).toBe(307);
    }
    expect((await viaProxy("/subscriptions?q=a%2500b", person)).status).toBe(200);
  });
});
