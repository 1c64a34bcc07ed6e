// The tenant boundary, generated from the route list: every route file under
// app/api/v1 and every method it exports is called as principals confined to
// tenant A (Lincoln) against tenant B's (Jefferson's) resources — B's ids in
// the path, the query and the body. A route file or method without a case here
// fails the test, so a new route cannot slip past the boundary.
//
// Each call must answer 404 or an empty/filtered answer for a read, 403/404 for
// a write (per case below); no response may carry a row of B (B's identifiers
// the request did not itself send), and nothing may be written (every table's
// row count, B's rows and the audit trail compared before and after each call).
// The same reads as a global admin DO show B's rows, so the probes are not
// vacuous, and the unscoped behaviour is unchanged.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { v1RouteFiles } from "../helpers/client-server";
import { call } from "../helpers/api";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import { createApiToken, clearTokenCache } from "../../lib/auth/tokens";
import type { Role } from "../../lib/auth/permissions";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import { findAuditEntries } from "../../app/(dashboard)/audit/find-audit-entries";
import { scopeOf } from "../../lib/tenants/scope";

const A = "lincoln";
const B = "jefferson";
const SUB_A = "sub_linc";
const SUB_B = "sub_jeff";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

let db: TestDb;
/** B's identifiers: none may appear in an answer to A unless the request itself carried it. */
const markers: string[] = [];
const ids = { dlvB: "", dlvBDelivered: "", dlvA: "", batchB: "", secretB: "", evtB: "evt_jeff_1" };
const tokens = new Map<string, string>();

type Expect = "404" | "403" | "forbidden-or-404" | "empty" | "filtered" | "conflict" | "batch-403" | "public";
type Case = {
  name: string;
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  expect: Expect;
  /** For reads: a global admin making the same call sees B (so the probe could find a leak). */
  globalSeesB?: boolean;
  /** A check on the scoped answer beyond "no marker of B". */
  check?: (json: any) => void;
};

const reason = { reason: "cross-tenant probe" };
const since = new Date(Date.now() - 7 * 86400_000).toISOString();

/** The subscription list's search, order and cursor (lib/subscriptions/list.ts): none of them reaches past the tenant. */
function subscriptionListProbes(): Case[] {
  const none = (j: any) => expect(j.items).toEqual([]);
  const onlyA = (j: any) => expect(j.items.map((s: any) => s.id)).toEqual([SUB_A]);
  // A cursor before every row (an empty name and id): the page after it is the whole list, in scope.
  const fromStart = Buffer.from(JSON.stringify(["name", "a", "", ""])).toString("base64url");
  const beforeEnd = Buffer.from(JSON.stringify(["-name", "b", "", ""])).toString("base64url");
  return [
    { name: "search for B's name", query: "q=Jefferson", expect: "filtered", globalSeesB: true, check: none },
    { name: "search for B's id", query: `q=${SUB_B}`, expect: "filtered", globalSeesB: true, check: none },
    { name: "search for B's tenant", query: `q=${B}`, expect: "filtered", globalSeesB: true, check: none },
    { name: "search for B's URL", query: "q=jeff-hook.example", expect: "filtered", globalSeesB: true, check: none },
    { name: "every order", query: "sort=-state&limit=500", expect: "filtered", globalSeesB: true, check: onlyA },
    { name: "a cursor before every row", query: `cursor=${fromStart}`, expect: "filtered", globalSeesB: true, check: onlyA },
    { name: "a backwards cursor after every row", query: `sort=-name&cursor=${beforeEnd}`, expect: "filtered", globalSeesB: true, check: onlyA },
  ];
}

/** Every route file × method: the calls made against B as a principal of A. */
function cases(): Record<string, Case[]> {
  const b = () => ids;
  return {
    "dashboard/deliveries/[id]:GET": [{ name: "B's delivery", params: { id: b().dlvB }, expect: "404", globalSeesB: true }],
    "dashboard/lookup:GET": [
      { name: "B's event id", query: `q=${ids.evtB}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.deliveries).toEqual([]) },
      { name: "B's tenant", query: `q=${B}`, expect: "filtered", globalSeesB: true, check: (j) => expect([j.deliveries, j.subscriptions]).toEqual([[], []]) },
      { name: "B's student", query: "q=stu_jeff_1", expect: "filtered", globalSeesB: true, check: (j) => expect(j.deliveries).toEqual([]) },
      { name: "B's subscription", query: `q=${SUB_B}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.subscriptions).toEqual([]) },
    ],
    "dashboard/redrives:GET": [{ name: "batches, named", expect: "filtered", globalSeesB: true, check: (j) => expect([j.items, j.names]).toEqual([[], {}]) }],
    "dashboard/subscriptions/[id]/answers:GET": [{ name: "B's answers", params: { id: SUB_B }, expect: "404", globalSeesB: true }],
    "dashboard/subscriptions/[id]/deliveries:GET": [{ name: "B's timeline", params: { id: SUB_B }, expect: "404", globalSeesB: true }],
    "dashboard/subscriptions/[id]:GET": [{ name: "B's overview", params: { id: SUB_B }, expect: "404", globalSeesB: true }],
    "dashboard/subscriptions:GET": [
      { name: "health list", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items.map((s: any) => s.id)).toEqual([SUB_A]) },
      { name: "health of B's tenant", query: `tenant=${B}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) },
      ...subscriptionListProbes(),
    ],
    "deliveries/[id]/redrive:POST": [{ name: "redrive B's dead letter", params: { id: b().dlvB }, body: reason, expect: "404" }],
    "deliveries/[id]/resend:POST": [{ name: "resend B's delivered", params: { id: b().dlvBDelivered }, body: reason, expect: "404" }],
    "deliveries/[id]/resolve:POST": [{ name: "resolve B's dead letter", params: { id: b().dlvB }, body: { resolution: "discarded", ...reason }, expect: "404" }],
    "deliveries/[id]:GET": [{ name: "B's delivery", params: { id: b().dlvB }, expect: "404", globalSeesB: true }],
    "deliveries:GET": [
      { name: "all deliveries", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items.map((d: any) => d.subscriptionId)).toEqual([SUB_A]) },
      { name: "B's subscription filter", query: `subscriptionId=${SUB_B}`, expect: "404" },
      { name: "B's event", query: `eventId=${ids.evtB}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) },
      { name: "B's student search", query: "q=stu_jeff_1", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) },
    ],
    "dlq/history:GET": [{ name: "DLQ history", expect: "filtered", check: (j) => expect(j.points.map((p: any) => p.depth).filter((d: number) => d > 0)).toEqual([]) }],
    "dlq/resolve:POST": [
      { name: "bulk resolve of B's subscription", body: { filter: { subscriptionId: SUB_B }, resolution: "discarded", ...reason }, expect: "404" },
      { name: "bulk resolve, no filter (A has no dead letter)", body: { filter: {}, resolution: "discarded", ...reason }, expect: "conflict" },
      {
        name: "bulk resolve preview, no filter",
        body: { filter: {}, resolution: "discarded", dryRun: true },
        expect: "filtered",
        check: (j) => expect(j.matched).toBe(0),
      },
      { name: "bulk resolve by B's reason", body: { filter: { deadLetterReason: "permanent" }, resolution: "discarded", ...reason }, expect: "conflict" },
    ],
    "dlq:GET": [
      { name: "DLQ summary", expect: "filtered", globalSeesB: true, check: (j) => expect(j.depth).toBe(0) },
      { name: "DLQ of B's subscription", query: `subscriptionId=${SUB_B}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.groups).toEqual([]) },
    ],
    "erasures:POST": [{ name: "erase in B", body: { subjectKey: "studentId", subjectValue: "stu_jeff_1", tenant: B, ...reason }, expect: "403" }],
    "events/batch:POST": [
      {
        name: "publish for B and for nobody",
        body: {
          events: [
            { id: "evt_probe_b", type: "assignment.graded", data: {}, subject: { tenant: B, studentId: "stu_x" } },
            { id: "evt_probe_none", type: "assignment.graded", data: {} },
          ],
        },
        expect: "batch-403",
      },
    ],
    "events:POST": [
      { name: "publish for B", body: { id: "evt_probe_b1", type: "assignment.graded", data: {}, subject: { tenant: B } }, expect: "403" },
      { name: "publish without a tenant", body: { id: "evt_probe_n1", type: "assignment.graded", data: {} }, expect: "403" },
    ],
    "openapi.json:GET": [{ name: "the API description", expect: "public" }],
    "redrives/[id]/cancel:POST": [{ name: "cancel B's batch", params: { id: b().batchB }, body: reason, expect: "404" }],
    "redrives/[id]:GET": [{ name: "B's batch", params: { id: b().batchB }, expect: "404", globalSeesB: true }],
    "redrives:POST": [
      { name: "redrive B's subscription", body: { filter: { subscriptionId: SUB_B }, ...reason }, expect: "404" },
      { name: "redrive, no filter (A has no dead letter)", body: { filter: {}, ...reason }, expect: "conflict" },
      { name: "redrive preview, no filter", body: { filter: {}, dryRun: true }, expect: "filtered", check: (j) => expect([j.matched, j.held]).toEqual([0, []]) },
    ],
    "redrives:GET": [{ name: "batches", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) }],
    "subscriptions/[id]/archive:POST": [{ name: "archive B's", params: { id: SUB_B }, body: reason, expect: "404" }],
    "subscriptions/[id]/backfill:POST": [
      { name: "backfill B's", params: { id: SUB_B }, body: { since, ...reason }, expect: "404" },
      { name: "backfill preview B's", params: { id: SUB_B }, body: { since, dryRun: true, ...reason }, expect: "404" },
    ],
    "subscriptions/[id]/recover:POST": [
      { name: "recover B's", params: { id: SUB_B }, body: { since, ...reason }, expect: "404" },
      { name: "recover preview B's", params: { id: SUB_B }, body: { since, dryRun: true, ...reason }, expect: "404" },
    ],
    "subscriptions/[id]:GET": [{ name: "B's subscription", params: { id: SUB_B }, expect: "404", globalSeesB: true }],
    "subscriptions/[id]:PATCH": [
      { name: "repoint B's", params: { id: SUB_B }, body: { url: "https://evil.example.test/h" }, expect: "404" },
      { name: "pause B's", params: { id: SUB_B }, body: { state: "paused", ...reason }, expect: "404" },
      { name: "move A's to B", params: { id: SUB_A }, body: { tenant: B }, expect: "403" },
      { name: "make A's receive every type", params: { id: SUB_A }, body: { eventTypes: ["*"] }, expect: "403" },
    ],
    "subscriptions/[id]/secrets/[secretId]:DELETE": [
      { name: "expire B's secret", params: { id: SUB_B, secretId: b().secretB }, expect: "404" },
      { name: "expire B's secret through A's subscription", params: { id: SUB_A, secretId: b().secretB }, expect: "404" },
    ],
    "subscriptions/[id]/secrets:POST": [{ name: "rotate B's secret", params: { id: SUB_B }, body: { overlapSeconds: 60 }, expect: "404" }],
    "subscriptions/[id]/secrets:GET": [{ name: "B's secrets", params: { id: SUB_B }, expect: "404", globalSeesB: true }],
    "subscriptions/[id]/test:POST": [
      { name: "test-send to B's", params: { id: SUB_B }, body: {}, expect: "404" },
      { name: "re-send B's event to A's endpoint", params: { id: SUB_A }, body: { eventId: ids.evtB }, expect: "404" },
    ],
    "subscriptions/[id]/test:GET": [{ name: "B's test sends", params: { id: SUB_B }, expect: "404" }],
    "subscriptions/[id]/unarchive:POST": [{ name: "unarchive B's", params: { id: SUB_B }, body: reason, expect: "404" }],
    "subscriptions:POST": [
      { name: "create for B", body: { name: "x", url: "https://x.example.test/h", eventTypes: ["assignment.graded"], tenant: B }, expect: "403" },
      { name: "create tenant-less", body: { name: "x", url: "https://x.example.test/h", eventTypes: ["assignment.graded"] }, expect: "403" },
      { name: "create *", body: { name: "x", url: "https://x.example.test/h", eventTypes: ["*"], tenant: A }, expect: "403" },
      { name: "create for an unknown tenant", body: { name: "x", url: "https://x.example.test/h", eventTypes: ["assignment.graded"], tenant: "nowhere" }, expect: "403" },
    ],
    "subscriptions:GET": [
      { name: "list", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items.map((s: any) => s.id)).toEqual([SUB_A]) },
      { name: "list of B's tenant", query: `tenant=${B}`, expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) },
      { name: "archived too", query: "archived=true", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items.map((s: any) => s.id)).toEqual([SUB_A]) },
      ...subscriptionListProbes(),
    ],
    "tenants:GET": [{ name: "tenants", expect: "forbidden-or-404", globalSeesB: true }],
    // The catalog is global; the subscriptions taking each type are the caller's tenant's only. Changing it is global-only.
    "event-types:GET": [
      { name: "catalog", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items[0].subscriptions.map((s: any) => s.id)).toEqual([SUB_A]) },
    ],
    "event-types/[type]:GET": [
      {
        name: "a type",
        params: { type: "assignment.graded" },
        expect: "filtered",
        globalSeesB: true,
        check: (j) => expect(j.subscriptions.map((s: any) => s.id)).toEqual([SUB_A]),
      },
    ],
    "event-types:POST": [{ name: "catalogue a type", body: { type: "course.created", description: "x" }, expect: "403" }],
    "event-types/[type]:PUT": [{ name: "change a type", params: { type: "assignment.graded" }, body: { description: "x" }, expect: "403" }],
    "event-types/[type]:DELETE": [{ name: "delete a type", params: { type: "assignment.graded" }, expect: "403" }],
    "tenants:POST": [{ name: "create a tenant", body: { id: "roosevelt", name: "Roosevelt" }, expect: "403" }],
    "portal/sessions:POST": [
      { name: "a portal link into B", body: { tenant: B }, expect: "403" },
      { name: "a portal link into B's subscription", body: { tenant: A, subscriptionId: SUB_B }, expect: "403" },
    ],
    "portal/sessions/[id]:DELETE": [{ name: "revoke a portal link", params: { id: "ps_0000000000000000" }, expect: "403" }],
    "tenants/[id]/contacts:GET": [{ name: "B's contacts", params: { id: B }, expect: "404", globalSeesB: true }],
    "tenants/[id]/contacts:PUT": [{ name: "set B's contacts", params: { id: B }, body: { emails: ["it@lincoln.example"] }, expect: "404" }],
    "notifications:GET": [
      { name: "notifications", expect: "filtered", globalSeesB: true, check: (j) => expect(j.items).toEqual([]) },
      {
        name: "notifications before the end of time",
        query: "before=9000-01-01T00:00:00Z",
        expect: "filtered",
        globalSeesB: true,
        check: (j) => expect(j.items).toEqual([]),
      },
    ],
    // The operator's default threshold holds nothing of any tenant's: a district reads it; only a global admin sets it.
    "notifications/settings:GET": [{ name: "the default threshold", expect: "public" }],
    "notifications/settings:PUT": [{ name: "set every district's default threshold", body: { dlqThreshold: 1 }, expect: "403" }],
    "retention:GET": [{ name: "retention policy (every tenant's overrides)", expect: "403" }],
    "retention:PUT": [{ name: "B's retention override", body: { tenant: B, retentionDays: 1 }, expect: "403" }],
    "retention/run:POST": [{ name: "run retention", body: {}, expect: "403" }],
  };
}

/** Everything a call could change: row counts, B's rows in full, the audit trail. */
async function snapshot(): Promise<string> {
  const q = async (text: string) => JSON.stringify((await db.pool.query(text)).rows);
  const tables = [
    "subscriptions",
    "subscription_secrets",
    "events",
    "deliveries",
    "attempts",
    "audit_entries",
    "redrive_batches",
    "redrive_batch_items",
    "tenants",
    "users",
    "api_tokens",
    "tenant_contacts",
    "notifications",
  ];
  const counts: Record<string, number> = {};
  for (const t of tables) counts[t] = Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n);
  return JSON.stringify({
    counts,
    subs: await q("SELECT * FROM subscriptions ORDER BY id"),
    secrets: await q("SELECT id, subscription_id, expires_at FROM subscription_secrets ORDER BY id"),
    deliveries: await q("SELECT id, state, resolution, next_attempt_at, attempt_count, updated_at FROM deliveries ORDER BY id"),
    batches: await q("SELECT id, status, tenant_id FROM redrive_batches ORDER BY id"),
  });
}

/** Every string a request carries (path ids, query values, body strings): an answer may echo these back. */
function sentStrings(params: Record<string, string> | undefined, query: string | undefined, body: unknown): string[] {
  const out: string[] = Object.values(params ?? {});
  for (const [, v] of new URLSearchParams(query ?? "")) out.push(v);
  const walk = (x: unknown) => {
    if (typeof x === "string") out.push(x);
    else if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === "object") Object.values(x).forEach(walk);
  };
  walk(body);
  return out.filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
}

/** B's identifiers in the answer once every string the request itself sent is taken out of it. */
function leaked(text: string, sent: string[]): string[] {
  let rest = text;
  for (const v of sent) rest = rest.split(JSON.stringify(v).slice(1, -1)).join("\u0000");
  return markers.filter((m) => rest.includes(m));
}

const routes = new Map<string, { file: string; fn: any }>();

beforeAll(async () => {
  db = await createTestDatabase();
  clearTokenCache();
  for (const file of v1RouteFiles()) {
    const mod = await import(/* @vite-ignore */ path.resolve(file));
    const rel = path.dirname(path.relative("app/api/v1", file));
    for (const m of METHODS) if (typeof mod[m] === "function") routes.set(`${rel}:${m}`, { file, fn: mod[m] });
  }
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ($1, 'Lincoln USD'), ($2, 'Jefferson County')", [A, B]);
  for (const [id, tenant, name] of [
    [SUB_A, A, "Lincoln SIS"],
    [SUB_B, B, "Jefferson SIS"],
  ])
    await createSubscription(db.prisma, { id, name, url: `https://${id}-hook.example.test/h`, eventTypes: ["assignment.graded"], tenant }, SYSTEM);
  // A: delivered only (so a scoped bulk operation with no filter finds nothing of its own); B: a dead letter and a delivered one.
  const at = new Date(Date.now() - 3600_000);
  await seedEvent(db.pool, { id: "evt_linc_1", subject: { tenant: A, studentId: "stu_linc_1" } });
  ids.dlvA = await seedDelivery(db.pool, { subscriptionId: SUB_A, eventId: "evt_linc_1", state: "delivered", attempts: [{ at, status: 200, outcome: "delivered" }] });
  await seedEvent(db.pool, { id: ids.evtB, subject: { tenant: B, studentId: "stu_jeff_1" } });
  await seedEvent(db.pool, { id: "evt_jeff_2", subject: { tenant: B, studentId: "stu_jeff_2" } });
  ids.dlvB = await seedDelivery(db.pool, {
    subscriptionId: SUB_B,
    eventId: ids.evtB,
    state: "dead_letter",
    reason: "permanent",
    attempts: [{ at, status: 422, errorClass: "http_4xx", outcome: "dead_letter", excerpt: "JEFF-ANSWER missing field" }],
  });
  ids.dlvBDelivered = await seedDelivery(db.pool, {
    subscriptionId: SUB_B,
    eventId: "evt_jeff_2",
    state: "delivered",
    attempts: [{ at, status: 200, outcome: "delivered" }],
  });
  ids.secretB = (await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = $1", [SUB_B])).rows[0].id;
  // A running redrive batch of B's (global admin's), and the DLQ as the sampler saw it.
  ids.batchB = (
    await db.pool.query(
      `INSERT INTO redrive_batches (filter, reason, actor, rate_per_second, matched, tenant_id) VALUES ($1, 'jeff batch', 'user:admin@hq', 10, 1, $2) RETURNING id`,
      [JSON.stringify({ subscriptionId: SUB_B }), B],
    )
  ).rows[0].id;
  await db.pool.query("INSERT INTO redrive_batch_items (batch_id, seq, delivery_id) VALUES ($1, 1, $2)", [ids.batchB, ids.dlvB]);
  await db.pool.query(
    `INSERT INTO dlq_samples (sampled_at, depth, oldest_at) VALUES (date_trunc('milliseconds', now() - interval '10 minutes'), 1, now() - interval '1 hour'),
            (date_trunc('milliseconds', now() - interval '30 seconds'), 1, now() - interval '1 hour')`,
  );
  await db.pool.query(
    `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
     SELECT sampled_at, $1, 'permanent', 'http_4xx', 422, 1, oldest_at FROM dlq_samples`,
    [SUB_B],
  );
  await db.pool.query("INSERT INTO event_types (type, description, created_by, updated_by) VALUES ('assignment.graded', 'A grade', 'system', 'system')");
  // B's notification contacts and a notice sent to them.
  await db.pool.query("INSERT INTO tenant_contacts (tenant, emails, updated_by) VALUES ($1, '{it@jeff.example}', 'system')", [B]);
  await db.pool.query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status)
     VALUES ('ntf_jeff', $1, $2, 'paused', 'email', 'it@jeff.example', 'Jefferson County: paused', 'JEFF-ANSWER', 'evt_jeff_ntf', 'sent')`,
    [B, SUB_B],
  );
  // B's audit trail: a global admin paused and resumed B's subscription.
  await db.pool.query(
    `INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details) VALUES
       ('user:admin@hq', 'subscription.pause', 'subscription', $1, 'JEFF-REASON', '{"from":"active","to":"paused"}')`,
    [SUB_B],
  );
  markers.push(SUB_B, B, "Jefferson", "jeff", ids.dlvB, ids.dlvBDelivered, ids.batchB, ids.secretB, ids.evtB, "evt_jeff_2", "stu_jeff", "JEFF-ANSWER", "JEFF-REASON");

  for (const role of ["support", "manager", "engineer", "admin", "producer"] as Role[]) {
    tokens.set(`${A}:${role}`, (await createApiToken(db.prisma, { role, name: `${A}-${role}`, tenantId: A })).token);
  }
  tokens.set("global:admin", (await createApiToken(db.prisma, { role: "admin", name: "global-admin" })).token);
});
afterAll(async () => db?.close());

describe("cross-tenant: every /api/v1 route as tenant A against tenant B", () => {
  it("has a case for every route file and method (a new route must add one)", () => {
    const all = cases();
    const missing = [...routes.keys()].filter((k) => !all[k]?.length);
    expect(missing).toEqual([]);
    const stale = Object.keys(all).filter((k) => !routes.has(k));
    expect(stale).toEqual([]);
  });

  for (const role of ["admin", "manager", "engineer", "support", "producer"] as Role[]) {
    it(`a ${role} of A: 404/403 or A's rows only, nothing of B in any answer, nothing written`, async () => {
      const token = tokens.get(`${A}:${role}`)!;
      const problems: string[] = [];
      for (const [key, list] of Object.entries(cases())) {
        const route = routes.get(key);
        if (!route) continue;
        const method = key.split(":")[1];
        for (const c of list) {
          const before = await snapshot();
          const urlPath = `/api/v1/${key.split(":")[0]}${c.query ? `?${c.query}` : ""}`;
          const r = await call(route.fn, { method, path: urlPath, token, params: c.params, body: c.body });
          const request = sentStrings(c.params, c.query, c.body);
          const where = `${role} ${method} ${key} (${c.name}) → ${r.status} ${r.text.slice(0, 200)}`;
          const leaks = leaked(r.text, request);
          if (leaks.length) problems.push(`${where}: leaks ${leaks.join(", ")}`);
          if ((await snapshot()) !== before) problems.push(`${where}: wrote something`);
          if (r.status >= 500) problems.push(`${where}: server error`);
          // A role without the permission is refused before the boundary matters: 403 is a pass for any case.
          if (r.status === 403) continue;
          const ok =
            c.expect === "404"
              ? r.status === 404
              : c.expect === "403"
                ? false
                : c.expect === "forbidden-or-404"
                  ? r.status === 404
                  : c.expect === "conflict"
                    ? r.status === 409
                    : c.expect === "public"
                      ? r.status === 200
                      : c.expect === "batch-403"
                        ? r.status === 200 && r.json.results.every((x: any) => x.error?.code === "forbidden")
                        : r.status === 200;
          if (!ok) problems.push(`${where}: expected ${c.expect}`);
          else if (c.check && r.status === 200) {
            try {
              c.check(r.json);
            } catch (e) {
              problems.push(`${where}: ${(e as Error).message.split("\n")[0]}`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
    });
  }

  it("the same reads as a global admin show B's rows (the probes can see a leak), and its answers are unchanged", async () => {
    const token = tokens.get("global:admin")!;
    const blind: string[] = [];
    for (const [key, list] of Object.entries(cases())) {
      const route = routes.get(key);
      if (!route) continue;
      for (const c of list.filter((x) => x.globalSeesB)) {
        const r = await call(route.fn, { method: "GET", path: `/api/v1/${key.split(":")[0]}${c.query ? `?${c.query}` : ""}`, token, params: c.params });
        const request = sentStrings(c.params, c.query, undefined);
        if (r.status !== 200 || leaked(r.text, request).length === 0) blind.push(`${key} (${c.name}) → ${r.status}`);
      }
    }
    expect(blind).toEqual([]);
  });
});

describe("the audit trail by tenant", () => {
  it("A's audit read holds A's rows only, whatever the filter names; a global read holds B's too", async () => {
    const a = scopeOf({ tenantId: A });
    for (const q of [{}, { tenant: B }, { targetId: SUB_B }, { actor: "admin" }]) {
      const page = await findAuditEntries(db.prisma, q, a);
      expect(page.items.filter((r) => r.tenantId !== A)).toEqual([]);
      expect(leaked(JSON.stringify(page), sentStrings(undefined, undefined, q))).toEqual([]);
    }
    const all = await findAuditEntries(db.prisma, {});
    expect(all.items.some((r) => r.targetId === SUB_B && r.tenantId === B)).toBe(true);
  });
});

describe("tenant A's own work still works", () => {
  it("A's producer publishes for A; A's manager reads and changes A's subscription; the audit rows carry A", async () => {
    const publish = routes.get("events:POST")!.fn;
    const ok = await call(publish, { token: tokens.get(`${A}:producer`), body: { id: "evt_linc_ok", type: "assignment.graded", data: {}, subject: { tenant: A } } });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.json.deliveries.map((d: any) => d.subscriptionId)).toEqual([SUB_A]);
    const get = await call(routes.get("subscriptions/[id]:GET")!.fn, { token: tokens.get(`${A}:manager`), params: { id: SUB_A } });
    expect(get.status).toBe(200);
    const patch = await call(routes.get("subscriptions/[id]:PATCH")!.fn, {
      method: "PATCH",
      token: tokens.get(`${A}:manager`),
      params: { id: SUB_A },
      body: { name: "Lincoln SIS (new)" },
    });
    expect(patch.status, patch.text).toBe(200);
    // A scoped account's subscription ids are generated (it sends none).
    const created = await call(routes.get("subscriptions:POST")!.fn, {
      token: tokens.get(`${A}:manager`),
      body: { name: "Lincoln LMS", url: "https://lms.lincoln.example.test/h", eventTypes: ["assignment.graded"], tenant: A },
    });
    expect(created.status, created.text).toBe(201);
    const audit = await db.pool.query("SELECT action, tenant_id FROM audit_entries WHERE target_id IN ($1, $2) ORDER BY id", [SUB_A, created.json.id]);
    expect(audit.rows).toContainEqual({ action: "subscription.update", tenant_id: A });
    expect(audit.rows).toContainEqual({ action: "subscription.create", tenant_id: A });
    await db.pool.query("DELETE FROM subscriptions WHERE id = $1", [created.json.id]);
  });

  it("a global admin still creates tenant-less and '*' subscriptions and moves one between tenants", async () => {
    const token = tokens.get("global:admin")!;
    const created = await call(routes.get("subscriptions:POST")!.fn, {
      token,
      body: { id: "sub_all", name: "All", url: "https://all.example.test/h", eventTypes: ["*"] },
    });
    expect(created.status, created.text).toBe(201);
    const moved = await call(routes.get("subscriptions/[id]:PATCH")!.fn, { method: "PATCH", token, params: { id: "sub_all" }, body: { tenant: B } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.tenant).toBe(B);
    await db.pool.query("DELETE FROM audit_entries WHERE target_id = 'sub_all'");
    await db.pool.query("DELETE FROM subscription_secrets WHERE subscription_id = 'sub_all'");
    await db.pool.query("DELETE FROM subscriptions WHERE id = 'sub_all'");
  });
});
