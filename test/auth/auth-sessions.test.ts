// Revocable sessions and changeable passwords: a per-user session version in
// every cookie, compared on every request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createUser } from "../../lib/auth/users";
import { createUserAsAdmin, setUserDisabled, setUserRole } from "../../lib/auth/admin";
import { handlePasswordChange, handleSession, handleSignIn, handleSignOut } from "../../lib/auth/signin";
import { SYSTEM } from "../../lib/auth/principal";
import { PEER_HEADER, trustPeerHeader } from "../../lib/auth/proxies";
import * as subs from "../../app/api/v1/subscriptions/route";

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
afterAll(async () => db?.close());

const SAME = { origin: "http://localhost", host: "localhost" };
// The client's address, as server.ts passes it to the handlers (lib/auth/proxies.ts).
trustPeerHeader();
let ipSeq = 0;
/** Each sign-in from its own address, so the rate limit never interferes. */
async function signIn(email: string, password: string) {
  const r = await call(handleSignIn, { path: "/api/auth/signin", body: { email, password }, headers: { ...SAME, [PEER_HEADER]: `192.0.2.${++ipSeq}` } });
  expect(r.status, r.text).toBe(200);
  return { ...session(r.headers), json: r.json };
}
function session(headers: Headers) {
  // What the browser keeps: the cookies set, not the ones removed (Max-Age=0).
  const set = headers
    .getSetCookie()
    .filter((c) => !c.includes("Max-Age=0"))
    .map((c) => c.split(";")[0]);
  const cookie = set.join("; ");
  const csrf = decodeURIComponent(set.find((c) => c.startsWith("hl_csrf="))!.slice("hl_csrf=".length));
  return { cookie, csrf };
}
const apiAs = (s: { cookie: string }) => call(subs.GET, { path: "/api/v1/subscriptions", headers: { cookie: s.cookie } });

describe("sessions end when they should", () => {
  it("a cookie reused after sign-out is refused", async () => {
    await createUser(db.prisma, { email: "out@hq.example", role: "support", password: "correct horse battery" });
    const s = await signIn("out@hq.example", "correct horse battery");
    expect((await apiAs(s)).status).toBe(200);
    const out = await call(handleSignOut, { method: "POST", headers: { ...SAME, cookie: s.cookie, "x-hookledger-csrf": s.csrf } });
    expect(out.status).toBe(200);
    // The browser dropped the cookie; a copy of it (another tab, a thief) must not work either.
    expect((await apiAs(s)).status).toBe(401);
    expect((await call(handleSession, { headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it("sign-out ends the user's other sessions too (sign-out everywhere)", async () => {
    await createUser(db.prisma, { email: "two@hq.example", role: "support", password: "correct horse battery" });
    const a = await signIn("two@hq.example", "correct horse battery");
    const b = await signIn("two@hq.example", "correct horse battery");
    await call(handleSignOut, { method: "POST", headers: { ...SAME, cookie: a.cookie, "x-hookledger-csrf": a.csrf } });
    expect((await apiAs(b)).status).toBe(401);
  });

  it("re-enabling a disabled user does not revive sessions issued before the disable", async () => {
    const u = await createUser(db.prisma, { email: "back@hq.example", role: "support", password: "correct horse battery" });
    const s = await signIn("back@hq.example", "correct horse battery");
    await setUserDisabled(db.prisma, u.id, true, SYSTEM);
    expect((await apiAs(s)).status).toBe(401);
    await setUserDisabled(db.prisma, u.id, false, SYSTEM);
    expect((await apiAs(s)).status).toBe(401);
    expect((await apiAs(await signIn("back@hq.example", "correct horse battery"))).status).toBe(200);
  });

  it("a role change ends the user's sessions and is audited", async () => {
    const u = await createUser(db.prisma, { email: "promoted@hq.example", role: "support", password: "correct horse battery" });
    const s = await signIn("promoted@hq.example", "correct horse battery");
    await setUserRole(db.prisma, u.id, "engineer", SYSTEM);
    expect((await apiAs(s)).status).toBe(401);
    const again = await signIn("promoted@hq.example", "correct horse battery");
    expect(again.json.role).toBe("engineer");
    expect(await db.prisma.auditEntry.count({ where: { action: "user.role", targetId: u.id } })).toBe(1);
    await expect(setUserRole(db.prisma, u.id, "producer", SYSTEM)).rejects.toMatchObject({ code: "validation_failed" });
  });
});

describe("password change", () => {
  const change = (s: { cookie: string; csrf: string }, body: unknown, headers: Record<string, string> = {}) =>
    call(handlePasswordChange, {
      path: "/api/auth/password",
      body,
      headers: { ...SAME, cookie: s.cookie, "x-hookledger-csrf": s.csrf, [PEER_HEADER]: "198.51.100.200", ...headers },
    });

  it("changes the password: other sessions end, this browser gets a new cookie, the old password stops working", async () => {
    await createUser(db.prisma, { email: "chg@hq.example", role: "support", password: "correct horse battery" });
    const a = await signIn("chg@hq.example", "correct horse battery");
    const b = await signIn("chg@hq.example", "correct horse battery");
    expect((await change(a, { currentPassword: "wrong password!!", newPassword: "a brand new passphrase" })).status).toBe(401);
    expect((await change(a, { currentPassword: "correct horse battery", newPassword: "short" })).status).toBe(400);
    expect((await change(a, { currentPassword: "correct horse battery", newPassword: "a brand new passphrase" }, { "x-hookledger-csrf": "forged" })).status).toBe(403);
    const ok = await change(a, { currentPassword: "correct horse battery", newPassword: "a brand new passphrase" });
    expect(ok.status, ok.text).toBe(200);
    expect((await apiAs(a)).status).toBe(401);
    expect((await apiAs(b)).status).toBe(401);
    expect((await apiAs(session(ok.headers))).status).toBe(200);
    const old = await call(handleSignIn, {
      path: "/api/auth/signin",
      body: { email: "chg@hq.example", password: "correct horse battery" },
      headers: { ...SAME, [PEER_HEADER]: "192.0.2.250" },
    });
    expect(old.status).toBe(401);
    await signIn("chg@hq.example", "a brand new passphrase");
  });

  it("a password an admin created must be changed at first sign-in before the API answers", async () => {
    const u = await createUserAsAdmin(db.prisma, { email: "fresh@hq.example", role: "engineer" }, SYSTEM);
    const s = await signIn("fresh@hq.example", u.password);
    expect(s.json.next).toMatch(/^\/password\?next=/);
    const refused = await apiAs(s);
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/\/password/);
    const ok = await change(s, { currentPassword: u.password, newPassword: "my own long passphrase" });
    expect(ok.status, ok.text).toBe(200);
    expect((await apiAs(session(ok.headers))).status).toBe(200);
    expect((await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } })).mustChangePassword).toBe(false);
    expect(await db.prisma.auditEntry.count({ where: { action: "user.password_change", targetId: u.id } })).toBe(1);
  });
});
