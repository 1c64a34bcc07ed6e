// Tenants as rows and principals confined to one: the tenants API and CLI,
// accounts and tokens with a tenant (400 for an unknown one, nothing written),
// the tenant on the principal, a scoped producer's batch (its own tenant's
// events published, another's refused at their index), bulk redrive and
// resolve confined to the caller's tenant in SQL whatever the filter, and the
// audit rows of scoped work carrying the tenant, and the event types a
// district's viewer is offered (its own only).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { runCli } from "../helpers/cli-run";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import * as tenants from "../../app/api/v1/tenants/route";
import * as batch from "../../app/api/v1/events/batch/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as dlqResolve from "../../app/api/v1/dlq/resolve/route";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import { clearTokenCache, createApiToken, findTokenPrincipal } from "../../lib/auth/tokens";
import { createTokenAsAdmin, createUserAsAdmin, findTokens } from "../../lib/auth/admin";
import { principalFromSessionCookie, SYSTEM } from "../../lib/auth/principal";
import { newSession, sealSession } from "../../lib/auth/cookies";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { findEventTypeChoices } from "../../lib/dashboard/subscriptions";
import { GLOBAL_SCOPE } from "../../lib/tenants/scope";

let db: TestDb;
let admin: string;
const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

beforeAll(async () => {
  db = await createTestDatabase();
  clearTokenCache();
  admin = await tokenFor(db.prisma, "admin");
});
afterAll(async () => db?.close());

async function seedDeadLetters(sub: string, tenant: string, n: number) {
  for (let i = 1; i <= n; i++) {
    await seedEvent(db.pool, { id: `evt_${sub}_${i}`, subject: { tenant, studentId: `stu_${i}` } });
    await seedDelivery(db.pool, {
      subscriptionId: sub,
      eventId: `evt_${sub}_${i}`,
      state: "dead_letter",
      reason: "permanent",
      attempts: [{ at: new Date(Date.now() - 60_000), status: 422, errorClass: "http_4xx", outcome: "dead_letter" }],
    });
  }
}

describe("tenants API and CLI", () => {
  it("a global admin registers and lists tenants (audited); a bad id is 400, a taken one 409, nothing written", async () => {
    const created = await call(tenants.POST, { token: admin, body: { id: "lincoln", name: "Lincoln USD" } });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ id: "lincoln", name: "Lincoln USD" });
    const audit = await db.pool.query("SELECT action, target_type, target_id, tenant_id FROM audit_entries WHERE action = 'tenant.create'");
    expect(audit.rows).toEqual([{ action: "tenant.create", target_type: "tenant", target_id: "lincoln", tenant_id: "lincoln" }]);
    const before = await tableCounts(db.pool);
    expect((await call(tenants.POST, { token: admin, body: { id: "lincoln", name: "again" } })).status).toBe(409);
    expect((await call(tenants.POST, { token: admin, body: { id: "bad id!", name: "x" } })).status).toBe(400);
    expect((await call(tenants.POST, { token: admin, body: { id: "x" } })).status).toBe(400);
    expect(await tableCounts(db.pool)).toEqual(before);
    const list = await call(tenants.GET, { token: admin });
    expect(list.json.items.map((t: { id: string }) => t.id)).toContain("lincoln");
  });

  it("a global admin's subscription naming a tenant not yet registered registers it with its own audit row, on create and on a move", async () => {
    const tenantRows = async (id: string) =>
      (await db.pool.query("SELECT actor, reason, details FROM audit_entries WHERE action = 'tenant.create' AND target_id = $1", [id])).rows;
    const body = { name: "Madison SIS", url: "https://madison.example.test/hooks", eventTypes: ["assignment.graded"] };
    const created = await call(subscriptions.POST, { token: admin, body: { ...body, id: "sub_madison", tenant: "madison" } });
    expect(created.status, created.text).toBe(201);
    expect(await tenantRows("madison")).toEqual([
      { actor: expect.stringMatching(/^token:/), reason: "registered by naming it on subscription sub_madison", details: { name: "madison" } },
    ]);
    // A typo in the tenant field is a new district too, and says so in the audit log.
    const moved = await call(subscription.PATCH, { token: admin, params: { id: "sub_madison" }, body: { tenant: "madisn" } });
    expect(moved.status, moved.text).toBe(200);
    expect(await tenantRows("madisn")).toHaveLength(1);
    // Naming a registered tenant registers nothing.
    const again = await call(subscriptions.POST, { token: admin, body: { ...body, id: "sub_madison_2", tenant: "madison" } });
    expect(again.status, again.text).toBe(201);
    expect(await tenantRows("madison")).toHaveLength(1);
  });

  it("hookledger tenant create / user create --tenant / token create --tenant; an unknown tenant exits 2 and writes nothing", async () => {
    const t = await cli("tenant", "create", "--id", "jefferson", "--name", "Jefferson County");
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain("Created tenant jefferson (Jefferson County)");
    const u = await cli("user", "create", "--email", "mgr@jefferson.example", "--role", "manager", "--tenant", "jefferson");
    expect(u.code, u.stderr).toBe(0);
    expect((await db.pool.query("SELECT tenant_id FROM users WHERE email = 'mgr@jefferson.example'")).rows).toEqual([{ tenant_id: "jefferson" }]);
    const tok = await cli("token", "create", "--role", "producer", "--tenant", "jefferson", "--name", "jeff-sis");
    expect(tok.code, tok.stderr).toBe(0);
    const token = tok.stdout.trim().split("\n").pop()!;
    expect(await findTokenPrincipal(db.prisma, token)).toMatchObject({ role: "producer", tenantId: "jefferson", actor: "token:jeff-sis" });
    const before = await tableCounts(db.pool);
    const bad = await cli("token", "create", "--role", "producer", "--tenant", "nowhere");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("there is no tenant nowhere");
    const badUser = await cli("user", "create", "--email", "x@nowhere.example", "--role", "manager", "--tenant", "nowhere");
    expect(badUser.code).toBe(2);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM users WHERE email = 'x@nowhere.example'")).rows[0].n).toBe(0);
    expect(await tableCounts(db.pool)).toEqual(before);
    const dup = await cli("tenant", "create", "--id", "jefferson", "--name", "again");
    expect(dup.code).toBe(2);
  }, 300_000);
});

describe("accounts and tokens with a tenant", () => {
  it("the admin use cases confine users and tokens; an unknown tenant is 400 with nothing written; a scoped admin manages neither", async () => {
    const before = await tableCounts(db.pool);
    await expect(createTokenAsAdmin(db.prisma, { role: "producer", tenantId: "nowhere" }, SYSTEM)).rejects.toMatchObject({ status: 400 });
    await expect(createUserAsAdmin(db.prisma, { email: "n@x.example", role: "manager", tenantId: "nowhere" }, SYSTEM)).rejects.toMatchObject({ status: 400 });
    expect(await tableCounts(db.pool)).toEqual(before);
    const t = await createTokenAsAdmin(db.prisma, { role: "engineer", name: "linc-eng", tenantId: "lincoln" }, SYSTEM);
    expect(t.tenantId).toBe("lincoln");
    expect((await findTokens(db.prisma, SYSTEM)).items.find((x) => x.id === t.id)?.tenantId).toBe("lincoln");
    const row = await db.pool.query("SELECT details, tenant_id FROM audit_entries WHERE action = 'token.create' AND target_id = $1", [t.id]);
    expect(row.rows[0]).toMatchObject({ details: { tenant: "lincoln" }, tenant_id: "lincoln" });
    const scopedAdmin = { kind: "user" as const, id: "usr_x", role: "admin" as const, actor: "user:x", tenantId: "lincoln" };
    await expect(createTokenAsAdmin(db.prisma, { role: "producer" }, scopedAdmin)).rejects.toMatchObject({ status: 403 });
    await expect(findTokens(db.prisma, scopedAdmin)).rejects.toMatchObject({ status: 403 });
  });

  it("a signed-in user's principal carries the user's tenant", async () => {
    const u = await createUserAsAdmin(db.prisma, { email: "mgr@lincoln.example", role: "manager", tenantId: "lincoln" }, SYSTEM);
    const sealed = await sealSession(newSession(u.id, 0));
    expect(await principalFromSessionCookie(sealed)).toMatchObject({ kind: "user", role: "manager", tenantId: "lincoln" });
  });
});

describe("creating subscriptions as a global manager", () => {
  it("must name an existing tenant: tenant-less is 403 (an admin's), an unknown tenant 400, nothing written; an admin may do both", async () => {
    const manager = await tokenFor(db.prisma, "manager");
    await db.prisma.tenant.upsert({ where: { id: "lincoln" }, create: { id: "lincoln", name: "Lincoln USD" }, update: {} });
    const body = (id: string, tenant?: string) => ({ id, name: id, url: "https://sis.example.test/h", eventTypes: ["assignment.graded"], ...(tenant ? { tenant } : {}) });
    const before = await tableCounts(db.pool);
    const tenantless = await call(subscriptions.POST, { token: manager, body: body("sub_gm_none") });
    expect(tenantless.status).toBe(403);
    expect(tenantless.json.error.details).toEqual([expect.objectContaining({ path: "body.tenant" })]);
    const unknown = await call(subscriptions.POST, { token: manager, body: body("sub_gm_unknown", "nowhere_usd") });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toMatch(/no tenant nowhere_usd/);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await call(subscriptions.POST, { token: manager, body: body("sub_gm_ok", "lincoln") })).status).toBe(201);
    expect((await call(subscriptions.POST, { token: admin, body: body("sub_admin_none") })).status).toBe(201);
    expect((await call(subscriptions.POST, { token: admin, body: body("sub_admin_new", "monroe_usd") })).status).toBe(201);
    expect((await db.pool.query("SELECT id FROM tenants WHERE id = 'monroe_usd'")).rows).toHaveLength(1);
  });
});

describe("scoped producers and bulk operations", () => {
  beforeAll(async () => {
    for (const [id, tenant] of [
      ["sub_l", "lincoln"],
      ["sub_j", "jefferson"],
    ])
      await createSubscription(db.prisma, { id, name: id, url: `https://${id}.example.test/h`, eventTypes: ["assignment.graded"], tenant }, SYSTEM);
    await seedDeadLetters("sub_l", "lincoln", 3);
    await seedDeadLetters("sub_j", "jefferson", 4);
  });

  it("a scoped producer's batch: its tenant's events are published, another tenant's and tenant-less ones are 403 at their index and not written", async () => {
    const producer = (await createApiToken(db.prisma, { role: "producer", tenantId: "lincoln" })).token;
    const ev = (id: string, subject?: object) => ({ id, type: "assignment.graded", data: {}, ...(subject ? { subject } : {}) });
    const r = await call(batch.POST, {
      token: producer,
      body: { events: [ev("evt_b1", { tenant: "lincoln" }), ev("evt_b2", { tenant: "jefferson" }), ev("evt_b3"), ev("evt_b4", { tenant: "lincoln" })] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results.map((x: any) => x.status ?? x.error.code)).toEqual(["created", "forbidden", "forbidden", "created"]);
    expect(r.json.results[1]).toMatchObject({ index: 1, id: "evt_b2" });
    const stored = await db.pool.query("SELECT id FROM events WHERE id LIKE 'evt_b%' ORDER BY id");
    expect(stored.rows.map((x) => x.id)).toEqual(["evt_b1", "evt_b4"]);
  });

  it("a scoped engineer's bulk redrive and resolve with no filter (or another tenant's reason) move its tenant's dead letters only, and the audit rows carry its tenant", async () => {
    const engineer = (await createApiToken(db.prisma, { role: "engineer", tenantId: "lincoln" })).token;
    const preview = await call(redrives.POST, { token: engineer, body: { filter: {}, dryRun: true } });
    expect(preview.json.matched).toBe(3);
    const resolvePreview = await call(dlqResolve.POST, { token: engineer, body: { filter: { deadLetterReason: "permanent" }, resolution: "discarded", dryRun: true } });
    expect(resolvePreview.json.matched).toBe(3);
    const resolved = await call(dlqResolve.POST, { token: engineer, body: { filter: {}, resolution: "discarded", reason: "INC-7" } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.json.resolved).toBe(3);
    const states = await db.pool.query("SELECT subscription_id, state, count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_sub_%' GROUP BY 1, 2 ORDER BY 1, 2");
    expect(states.rows).toEqual([
      { subscription_id: "sub_j", state: "dead_letter", n: 4 },
      { subscription_id: "sub_l", state: "resolved", n: 3 },
    ]);
    const audit = await db.pool.query(
      "SELECT action, tenant_id, count(*)::int AS n FROM audit_entries WHERE action IN ('dlq.resolve', 'delivery.resolve') GROUP BY 1, 2 ORDER BY 1",
    );
    expect(audit.rows).toEqual([
      { action: "delivery.resolve", tenant_id: "lincoln", n: 3 },
      { action: "dlq.resolve", tenant_id: "lincoln", n: 1 },
    ]);
    // Nothing of Lincoln's is left dead-lettered: the redrive finds nothing (409), Jefferson's untouched.
    const redrive = await call(redrives.POST, { token: engineer, body: { filter: {}, reason: "INC-7" } });
    expect(redrive.status, redrive.text).toBe(409);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_j' AND state = 'dead_letter'")).rows[0].n).toBe(4);
  });

  it("a scoped engineer's bulk redrive batch belongs to its tenant: listed for it, not for the other tenant", async () => {
    await db.pool.query(
      "UPDATE deliveries SET state = 'dead_letter', resolution = NULL, resolved_at = NULL, resolved_by = NULL, resolution_reason = NULL WHERE event_id LIKE 'evt_sub_l_%'",
    );
    const linc = (await createApiToken(db.prisma, { role: "engineer", tenantId: "lincoln" })).token;
    const jeff = (await createApiToken(db.prisma, { role: "engineer", tenantId: "jefferson" })).token;
    const created = await call(redrives.POST, { token: linc, body: { filter: {}, reason: "INC-8", ratePerSecond: 1 } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.matched).toBe(3);
    expect((await db.pool.query("SELECT tenant_id FROM redrive_batches WHERE id = $1", [created.json.id])).rows[0].tenant_id).toBe("lincoln");
    expect((await call(redrives.GET, { token: linc })).json.items.map((b: any) => b.id)).toEqual([created.json.id]);
    expect((await call(redrives.GET, { token: jeff })).json.items).toEqual([]);
    const audit = await db.pool.query("SELECT tenant_id FROM audit_entries WHERE action = 'redrive.create' AND target_id = $1", [created.json.id]);
    expect(audit.rows).toEqual([{ tenant_id: "lincoln" }]);
  });
});

describe("the New subscription dialog's event types", () => {
  it("a district's viewer is offered its own district's published types only; a global viewer every type", async () => {
    await seedEvent(db.pool, { id: "evt_types_l", type: "roster.synced", subject: { tenant: "lincoln" } });
    await seedEvent(db.pool, { id: "evt_types_j", type: "jefferson.only_type", subject: { tenant: "jefferson" } });
    await seedEvent(db.pool, { id: "evt_types_none", type: "platform.wide_type" });
    const lincoln = (await findEventTypeChoices({ tenantId: "lincoln" }, db.pool)).types;
    expect(lincoln).toContain("roster.synced");
    expect(lincoln).not.toContain("jefferson.only_type");
    expect(lincoln).not.toContain("platform.wide_type");
    expect((await findEventTypeChoices(GLOBAL_SCOPE, db.pool)).types).toEqual(expect.arrayContaining(["roster.synced", "jefferson.only_type", "platform.wide_type"]));
  });

  it("past 500 types the list is the first 500 by name and says there are more; below, it says nothing", async () => {
    expect(await findEventTypeChoices({ tenantId: "lincoln" }, db.pool)).toMatchObject({ more: false });
    // 300 catalogued and 300 published by Lincoln, interleaved by name: 600 in all, no source alone past 500.
    await db.pool.query(
      `INSERT INTO event_types (type, description, created_by, updated_by)
       SELECT 'many.t' || lpad((i * 2)::text, 4, '0'), '', 'test', 'test' FROM generate_series(1, 300) i`,
    );
    for (let i = 1; i <= 300; i++) await seedEvent(db.pool, { id: `evt_many_${i}`, type: `many.t${String(i * 2 - 1).padStart(4, "0")}`, subject: { tenant: "lincoln" } });
    const all = (await db.pool.query("SELECT type FROM event_types WHERE NOT deprecated UNION SELECT type FROM events WHERE tenant = 'lincoln'")).rows.map(
      (r) => r.type as string,
    );
    expect(all.length).toBeGreaterThanOrEqual(600);
    const choices = await findEventTypeChoices({ tenantId: "lincoln" }, db.pool);
    expect(choices.more).toBe(true);
    expect(choices.types).toHaveLength(500);
    expect(choices.types).toEqual(all.sort().slice(0, 500));
    expect(choices.types).not.toContain("many.t0600");
  });
});
