// The admin use cases behind /admin/users and /admin/tokens: enforced by the
// permission table for every role, audited, and effective at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import * as subs from "../../app/api/v1/subscriptions/route";
import { ROLES, can, type Role } from "../../lib/auth/permissions";
import type { Principal } from "../../lib/auth/principal";
import { createTokenAsAdmin, createUserAsAdmin, findTokens, findUsers, revokeToken, setUserDisabled } from "../../lib/auth/admin";
import { createUser } from "../../lib/auth/users";
import { newSession, sessionSetCookies } from "../../lib/auth/cookies";

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
afterAll(async () => db?.close());

const as = (role: Role): Principal => ({ kind: "user", id: `usr_${role}`, role, actor: `user:${role}@hq.example` });

describe("admin use cases × roles", () => {
  it("only roles with users.manage / tokens.manage may call them; the rest get 403", async () => {
    for (const role of ROLES) {
      const p = as(role);
      const attempts: [string, () => Promise<unknown>, boolean][] = [
        ["findUsers", () => findUsers(db.prisma, p), can(role, "users.manage")],
        ["createUserAsAdmin", () => createUserAsAdmin(db.prisma, { email: `made-by-${role}@hq.example`, role: "support" }, p), can(role, "users.manage")],
        ["findTokens", () => findTokens(db.prisma, p), can(role, "tokens.manage")],
        ["createTokenAsAdmin", () => createTokenAsAdmin(db.prisma, { role: "producer", name: `by-${role}` }, p), can(role, "tokens.manage")],
      ];
      for (const [name, fn, allowed] of attempts) {
        if (allowed) await expect(fn(), `${name} as ${role}`).resolves.toBeDefined();
        else await expect(fn(), `${name} as ${role}`).rejects.toMatchObject({ code: "forbidden" });
      }
    }
  });

  it("creating a user or a token is audited without the password or token", async () => {
    const u = await createUserAsAdmin(db.prisma, { email: "new@hq.example", role: "engineer" }, as("admin"));
    const t = await createTokenAsAdmin(db.prisma, { role: "producer", name: "sis-publisher" }, as("admin"));
    const rows = await db.prisma.auditEntry.findMany({ where: { targetId: { in: [u.id, t.id] } } });
    expect(rows.map((r) => r.action).sort()).toEqual(["token.create", "user.create"]);
    const text = JSON.stringify(rows.map((r) => ({ actor: r.actor, reason: r.reason, details: r.details })));
    expect(text).not.toContain(u.password);
    expect(text).not.toContain(t.token);
  });

  it("a disabled user's session stops working at once; a revoked token answers 401", async () => {
    const u = await createUser(db.prisma, { email: "leaver@hq.example", role: "support" });
    const cookie = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    expect((await call(subs.GET, { headers: { cookie } })).status).toBe(200);
    await setUserDisabled(db.prisma, u.id, true, as("admin"));
    expect((await call(subs.GET, { headers: { cookie } })).status).toBe(401);
    expect((await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "user.disable", targetId: u.id } })).actor).toBe("user:admin@hq.example");

    const t = await createTokenAsAdmin(db.prisma, { role: "support", name: "old-integration" }, as("admin"));
    expect((await call(subs.GET, { token: t.token })).status).toBe(200);
    await revokeToken(db.prisma, t.id, as("admin"));
    expect((await call(subs.GET, { token: t.token })).status).toBe(401);
  });

  it("an admin cannot disable themself", async () => {
    const me = await createUser(db.prisma, { email: "me@hq.example", role: "admin" });
    await expect(setUserDisabled(db.prisma, me.id, true, { ...as("admin"), id: me.id })).rejects.toMatchObject({ code: "bad_request" });
  });

  it("past the newest 500 tokens the list says how many there are and finds an older one by name", async () => {
    // 520 tokens, the oldest first; the API tokens page lists the newest 500 and used to drop the rest silently.
    await db.pool.query(
      `INSERT INTO api_tokens (id, name, role, token_hash, created_at)
       SELECT 'tok_bulk_' || lpad(g::text, 4, '0'), 'bulk-' || g, 'producer', 'hash-bulk-' || g, now() - (1000 - g) * interval '1 minute'
         FROM generate_series(1, 520) g`,
    );
    const all = await findTokens(db.prisma, as("admin"));
    const total = Number((await db.pool.query("SELECT count(*) FROM api_tokens")).rows[0].count);
    expect(all.items).toHaveLength(500);
    expect(all.total).toBe(total);
    expect(all.items.map((t) => t.id)).not.toContain("tok_bulk_0001");
    const found = await findTokens(db.prisma, as("admin"), { q: "BULK-1" });
    expect(found.items.map((t) => t.name)).toContain("bulk-1");
    expect(found.total).toBe(found.items.length);
  });
});
