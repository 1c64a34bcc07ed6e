// /api/auth/session lists the permissions the UI uses to show or hide what the
// viewer may do. It must list what the server will actually allow: for an
// account confined to a tenant, the tenant-aware check (canAs), so a
// district's admin is never offered users, tokens, tenants, erasure or
// retention, which every route refuses it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as tenants from "../../app/api/v1/tenants/route";
import { handleSession } from "../../lib/auth/signin";
import { clearTokenCache, createApiToken } from "../../lib/auth/tokens";
import { createUser } from "../../lib/auth/users";
import { newSession, sealSession, SESSION_COOKIE } from "../../lib/auth/cookies";
import { GLOBAL_ONLY_PERMISSIONS, ROLE_PERMISSIONS, canAs, type Permission } from "../../lib/auth/permissions";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  clearTokenCache();
  const admin = await tokenFor(db.prisma, "admin");
  expect((await call(tenants.POST, { token: admin, body: { id: "lincoln", name: "Lincoln USD" } })).status).toBe(201);
});
afterAll(async () => db?.close());

const ALL = Object.keys(ROLE_PERMISSIONS) as Permission[];

describe("GET /api/auth/session", () => {
  it("a district admin's token is not offered the global-only permissions", async () => {
    const { token } = await createApiToken(db.prisma, { role: "admin", tenantId: "lincoln" });
    const r = await call(handleSession, { path: "/api/auth/session", token });
    expect(r.status, r.text).toBe(200);
    for (const p of GLOBAL_ONLY_PERMISSIONS) expect(r.json.permissions, p).not.toContain(p);
    expect(r.json.permissions).toEqual(ALL.filter((p) => canAs({ role: "admin", tenantId: "lincoln" }, p)));
    expect(r.json.permissions).toContain("deliveries.redrive");
  });

  it("a district admin signed in to the dashboard sees the same list; a global admin keeps every permission", async () => {
    const scoped = await createUser(db.prisma, { email: "admin@lincoln.example", role: "admin", password: "correct horse battery", tenantId: "lincoln" });
    const global = await createUser(db.prisma, { email: "admin@hq.example", role: "admin", password: "correct horse battery" });
    const asUser = async (u: { id: string }) => {
      const row = await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } });
      const cookie = `${SESSION_COOKIE}=${await sealSession(newSession(row.id, row.sessionVersion))}`;
      return call(handleSession, { path: "/api/auth/session", headers: { cookie } });
    };
    const s = await asUser(scoped);
    expect(s.status, s.text).toBe(200);
    for (const p of GLOBAL_ONLY_PERMISSIONS) expect(s.json.permissions, p).not.toContain(p);
    const g = await asUser(global);
    expect(g.json.permissions).toEqual(ALL.filter((p) => (ROLE_PERMISSIONS[p] as readonly string[]).includes("admin")));
    expect(g.json.permissions).toContain("users.manage");
  });
});
