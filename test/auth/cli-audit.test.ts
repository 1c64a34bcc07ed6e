// Nothing unrecorded: a user, token or tenant made from the CLI writes the
// audit row the admin page's change writes, by `cli:<os user>@<host>`, with the
// tenant it confines to; and a district user's own password change is the
// district's audit row, not a global one.
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { runCli } from "../helpers/cli-run";
import { SYSTEM } from "../../lib/auth/principal";
import { createUserAsAdmin, setUserDisabled, setUserRole } from "../../lib/auth/admin";
import { changePassword } from "../../lib/auth/users";
import { createTenant } from "../../lib/tenants/manage-tenants";
import { ensureDemoTenants, ensureDemoUser } from "../../demo/run";
import { DEMO_ADMIN_EMAIL } from "../../lib/auth/users";
import { DISTRICTS } from "../../demo/districts";

let db: TestDb;
const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });
const actor = `cli:${os.userInfo().username}@${os.hostname()}`;

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.prisma, { id: "lincoln", name: "Lincoln USD" }, SYSTEM);
}, 120_000);
afterAll(async () => db?.close());

async function auditOf(action: string, targetId: string) {
  const { rows } = await db.pool.query("SELECT actor, details, tenant_id FROM audit_entries WHERE action = $1 AND target_id = $2", [action, targetId]);
  return rows;
}

describe("CLI changes are audited like the dashboard's", () => {
  it("user create, token create and tenant create each write their row, by the OS user, with the tenant", async () => {
    const t = await cli("tenant", "create", "--id", "cedarfalls", "--name", "Cedar Falls Community Schools");
    expect(t.code, t.stderr).toBe(0);
    expect(await auditOf("tenant.create", "cedarfalls")).toEqual([{ actor, details: { name: "Cedar Falls Community Schools" }, tenant_id: "cedarfalls" }]);

    const u = await cli("user", "create", "--email", "mgr@lincoln.example", "--role", "manager", "--tenant", "lincoln");
    expect(u.code, u.stderr).toBe(0);
    const [user] = (await db.pool.query("SELECT id FROM users WHERE email = 'mgr@lincoln.example'")).rows;
    expect(await auditOf("user.create", user.id)).toEqual([
      { actor, details: { email: "mgr@lincoln.example", role: "manager", tenant: "lincoln" }, tenant_id: "lincoln" },
    ]);

    const g = await cli("user", "create", "--email", "ops@example.com", "--role", "admin");
    expect(g.code, g.stderr).toBe(0);
    const [global] = (await db.pool.query("SELECT id FROM users WHERE email = 'ops@example.com'")).rows;
    expect(await auditOf("user.create", global.id)).toEqual([{ actor, details: { email: "ops@example.com", role: "admin", tenant: null }, tenant_id: null }]);

    const tok = await cli("token", "create", "--role", "producer", "--tenant", "lincoln", "--name", "lincoln-sis");
    expect(tok.code, tok.stderr).toBe(0);
    const [token] = (await db.pool.query("SELECT id FROM api_tokens WHERE name = 'lincoln-sis'")).rows;
    expect(await auditOf("token.create", token.id)).toEqual([{ actor, details: { name: "lincoln-sis", role: "producer", tenant: "lincoln" }, tenant_id: "lincoln" }]);
  }, 300_000);

  it("a refused CLI change writes neither the change nor an audit row", async () => {
    const before = (await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n;
    const dup = await cli("user", "create", "--email", "mgr@lincoln.example", "--role", "manager");
    expect(dup.code).toBe(2);
    const badName = await cli("token", "create", "--role", "producer", "--name", "no/slashes");
    expect(badName.code).toBe(2);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n).toBe(before);
  }, 120_000);
});

describe("a district user's own actions carry the district", () => {
  it("password change, and an admin's disable and role change of a district user, are the district's rows", async () => {
    const u = await createUserAsAdmin(db.prisma, { email: "teacher@lincoln.example", role: "support", tenantId: "lincoln" }, SYSTEM);
    expect(await changePassword(db.prisma, u.id, u.password, "a new password of mine")).not.toBeNull();
    expect(await auditOf("user.password_change", u.id)).toEqual([{ actor: "user:teacher@lincoln.example", details: { email: u.email }, tenant_id: "lincoln" }]);
    await setUserRole(db.prisma, u.id, "manager", SYSTEM);
    await setUserDisabled(db.prisma, u.id, true, SYSTEM);
    for (const action of ["user.role", "user.disable"]) expect((await auditOf(action, u.id)).map((r) => r.tenant_id)).toEqual(["lincoln"]);
  }, 120_000);
});

describe("the demo's tenants are districts", () => {
  it("registers each district by its name, renames a placeholder named by its id (audited), and leaves a chosen name alone", async () => {
    // A demo data directory from before: the database registered the tenant under its id.
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('riverside', 'riverside')");
    await db.pool.query("UPDATE tenants SET name = 'Our Lincoln' WHERE id = 'lincoln'");
    await ensureDemoTenants(db.prisma);
    await ensureDemoTenants(db.prisma);
    const names = Object.fromEntries((await db.pool.query("SELECT id, name FROM tenants")).rows.map((r) => [r.id, r.name]));
    for (const d of DISTRICTS.filter((x) => x.slug !== "lincoln" && x.slug !== "cedarfalls")) expect(names[d.slug]).toBe(d.tenantName);
    expect(names.riverside).toBe("Riverside ISD");
    expect(names.lincoln).toBe("Our Lincoln");
    expect(Object.entries(names).filter(([id, name]) => id === name)).toEqual([]);
    expect(await auditOf("tenant.rename", "riverside")).toEqual([{ actor: "system", details: { from: "riverside", to: "Riverside ISD" }, tenant_id: "riverside" }]);
    expect((await auditOf("tenant.create", "oakridge")).length).toBe(1);
  });

  it("the demo admin it creates is audited like an admin's create", async () => {
    const u = await ensureDemoUser(db.prisma, () => {}, null);
    expect(u?.email).toBe(DEMO_ADMIN_EMAIL);
    const [row] = (await db.pool.query("SELECT id FROM users WHERE email = $1", [DEMO_ADMIN_EMAIL])).rows;
    expect(await auditOf("user.create", row.id)).toEqual([{ actor: "system", details: { email: DEMO_ADMIN_EMAIL, role: "admin", tenant: null }, tenant_id: null }]);
  });
});
