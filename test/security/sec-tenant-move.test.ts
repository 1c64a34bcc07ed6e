// A subscription's history stays with the tenant it was made under: a
// subscription that has deliveries cannot change tenant (409: archive it and
// create another), so a tenant-less endpoint that carried Jefferson's events
// can never be moved into Lincoln, where Lincoln's users would list it, read
// Jefferson's payloads, find them by a student's id and resend them. A
// subscription without deliveries still moves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import { createApiToken } from "../../lib/auth/tokens";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import * as delivery from "../../app/api/v1/deliveries/[id]/route";
import * as resend from "../../app/api/v1/deliveries/[id]/resend/route";
import * as lookup from "../../app/api/v1/dashboard/lookup/route";

let db: TestDb;
let globalAdmin: string;
let lincolnSupport: string;
let lincolnEngineer: string;
let jeffDelivery: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  globalAdmin = (await createApiToken(db.prisma, { role: "admin", name: "hq-admin" })).token;
  lincolnSupport = (await createApiToken(db.prisma, { role: "support", name: "l-support", tenantId: "lincoln" })).token;
  lincolnEngineer = (await createApiToken(db.prisma, { role: "engineer", name: "l-engineer", tenantId: "lincoln" })).token;
  // A tenant-less endpoint (a global admin's) that delivered one of Jefferson's grades.
  await createSubscription(db.prisma, { id: "sub_hub", name: "Hub", url: "https://hub.example.test/h", eventTypes: ["assignment.graded"] }, SYSTEM);
  await seedEvent(db.pool, { id: "evt_jeff_grade", subject: { tenant: "jefferson", studentId: "stu_jeff_77" } });
  jeffDelivery = await seedDelivery(db.pool, {
    subscriptionId: "sub_hub",
    eventId: "evt_jeff_grade",
    state: "delivered",
    attempts: [{ at: new Date(Date.now() - 60_000), status: 200, outcome: "delivered" }],
  });
  // A tenant-less endpoint that has not received anything yet.
  await createSubscription(db.prisma, { id: "sub_fresh", name: "Fresh", url: "https://fresh.example.test/h", eventTypes: ["assignment.graded"] }, SYSTEM);
});
afterAll(async () => db?.close());

const row = async (id: string) => (await db.pool.query("SELECT tenant, url FROM subscriptions WHERE id = $1", [id])).rows[0];

describe("a subscription with deliveries keeps its tenant", () => {
  it("a global admin's move of it into lincoln is a 409 that says to archive it and create another; nothing changes", async () => {
    const before = await row("sub_hub");
    const audits = (await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n;
    for (const body of [{ tenant: "lincoln" }, { tenant: "lincoln", url: "https://sis.lincoln.example.test/h" }, { tenant: "jefferson" }]) {
      const r = await call(subscription.PATCH, { method: "PATCH", token: globalAdmin, params: { id: "sub_hub" }, body });
      expect(r.status, r.text).toBe(409);
      expect(r.json.error.message).toMatch(/has deliveries/);
      expect(r.json.error.message).toMatch(/archive it/i);
    }
    expect(await row("sub_hub")).toEqual(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n).toBe(audits);
  });

  it("so Lincoln never lists it, reads Jefferson's delivery, finds it by the student's id, or resends it", async () => {
    const list = await call(subscriptions.GET, { path: "/api/v1/subscriptions", token: lincolnSupport });
    expect(list.json.items.map((s: { id: string }) => s.id)).not.toContain("sub_hub");
    expect((await call(delivery.GET, { token: lincolnSupport, params: { id: jeffDelivery } })).status).toBe(404);
    const byStudent = await call(deliveries.GET, { path: "/api/v1/deliveries?q=stu_jeff_77", token: lincolnSupport });
    expect(byStudent.status).toBe(200);
    expect(byStudent.json.items).toEqual([]);
    const found = await call(lookup.GET, { path: "/api/v1/dashboard/lookup?q=stu_jeff_77", token: lincolnSupport });
    expect(found.json.deliveries).toEqual([]);
    const resent = await call(resend.POST, { token: lincolnEngineer, params: { id: jeffDelivery }, body: { reason: "INC-1 resend" } });
    expect(resent.status).toBe(404);
    const state = (await db.pool.query("SELECT state, next_trigger FROM deliveries WHERE id = $1", [jeffDelivery])).rows[0];
    expect(state).toEqual({ state: "delivered", next_trigger: "scheduled" });
  });

  it("naming its current tenant is not a move, and other changes go through", async () => {
    const r = await call(subscription.PATCH, { method: "PATCH", token: globalAdmin, params: { id: "sub_hub" }, body: { tenant: null, name: "Hub (renamed)" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ tenant: null, name: "Hub (renamed)" });
  });
});

describe("a subscription without deliveries still moves", () => {
  it("into lincoln, and back out", async () => {
    const into = await call(subscription.PATCH, { method: "PATCH", token: globalAdmin, params: { id: "sub_fresh" }, body: { tenant: "lincoln" } });
    expect(into.status, into.text).toBe(200);
    expect(into.json.tenant).toBe("lincoln");
    expect((await call(subscription.GET, { token: lincolnSupport, params: { id: "sub_fresh" } })).status).toBe(200);
    const out = await call(subscription.PATCH, { method: "PATCH", token: globalAdmin, params: { id: "sub_fresh" }, body: { tenant: null } });
    expect(out.status, out.text).toBe(200);
    expect((await row("sub_fresh")).tenant).toBeNull();
  });
});
