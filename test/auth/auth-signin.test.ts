// Sign-in: users from createUser, scrypt hashes, sealed cookies, the rate limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createUser } from "../../lib/auth/users";
import { verifyPassword } from "../../lib/auth/password";
import { handleSession, handleSignIn, handleSignOut } from "../../lib/auth/signin";
import { SIGN_IN_MAX_FAILURES, SIGN_IN_MAX_FAILURES_PER_EMAIL } from "../../lib/auth/rate-limit";
import * as subs from "../../app/api/v1/subscriptions/route";
import { PEER_HEADER, trustPeerHeader } from "../../lib/auth/proxies";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  // The client's address, as server.ts passes it to the handlers (lib/auth/proxies.ts).
  trustPeerHeader();
});
afterAll(async () => db?.close());

/** The cookies set by these Set-Cookie answers, not the ones removed (Max-Age=0: a framed portal's partitioned form). */
const setCookies = (headers: Headers) => headers.getSetCookie().filter((c) => !c.includes("Max-Age=0"));

/** The Cookie header a browser would send back after these Set-Cookie answers. */
function cookieJar(headers: Headers): string {
  return setCookies(headers)
    .map((c) => c.split(";")[0])
    .join("; ");
}

const signIn = (body: unknown, headers: Record<string, string> = {}) =>
  call(handleSignIn, { path: "/api/auth/signin", body, headers: { origin: "http://localhost", host: "localhost", "sec-fetch-site": "same-origin", ...headers } });

describe("createUser", () => {
  it("stores an scrypt hash, never the password, and returns the password once", async () => {
    const u = await createUser(db.prisma, { email: "Ana@Lincoln.example", role: "support" });
    expect(u).toMatchObject({ email: "ana@lincoln.example", role: "support" });
    expect(u.password.length).toBeGreaterThanOrEqual(16);
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } });
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(row.passwordHash).not.toContain(u.password);
    expect(await verifyPassword(u.password, row.passwordHash)).toBe(true);
    expect(await verifyPassword(u.password + "x", row.passwordHash)).toBe(false);
  });

  it("refuses producers, unknown roles, bad emails, short passwords and duplicates with clear messages", async () => {
    await expect(createUser(db.prisma, { email: "p@x.example", role: "producer" })).rejects.toThrow(/token create --role producer/);
    await expect(createUser(db.prisma, { email: "p@x.example", role: "owner" })).rejects.toThrow(/support, manager, engineer, admin/);
    await expect(createUser(db.prisma, { email: "not-an-email", role: "admin" })).rejects.toThrow(/email/);
    await expect(createUser(db.prisma, { email: "p@x.example", role: "admin", password: "short" })).rejects.toThrow(/12 characters/);
    await expect(createUser(db.prisma, { email: "ANA@lincoln.example", role: "admin" })).rejects.toThrow(/already exists/);
  });
});

describe("POST /api/auth/signin", () => {
  it("signs in: an httpOnly SameSite session cookie and a readable CSRF cookie; the session authenticates the API", async () => {
    const u = await createUser(db.prisma, { email: "eng@hq.example", role: "engineer", password: "correct horse battery" });
    const r = await signIn({ email: "ENG@hq.example", password: "correct horse battery", next: "/dlq" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ email: "eng@hq.example", role: "engineer", next: "/dlq" });
    const set = setCookies(r.headers);
    const session = set.find((c) => c.startsWith("hl_session="))!;
    const csrf = set.find((c) => c.startsWith("hl_csrf="))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    expect(session).not.toMatch(/Secure/); // plain http here
    expect(csrf).not.toMatch(/HttpOnly/);
    expect(session).not.toContain(u.id); // sealed, not readable

    const who = await call(handleSession, { headers: { cookie: cookieJar(r.headers) } });
    expect(who.json).toMatchObject({ kind: "user", actor: "user:eng@hq.example", role: "engineer" });
    expect(who.json.permissions).toContain("deliveries.redrive");
    const list = await call(subs.GET, { path: "/api/v1/subscriptions", headers: { cookie: cookieJar(r.headers) } });
    expect(list.status, list.text).toBe(200);
    expect((await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } })).lastSignInAt).not.toBeNull();
  });

  it("sets Secure under HTTPS (x-forwarded-proto from a TLS proxy)", async () => {
    await createUser(db.prisma, { email: "tls@hq.example", role: "support", password: "correct horse battery" });
    const r = await signIn({ email: "tls@hq.example", password: "correct horse battery" }, { "x-forwarded-proto": "https", origin: "https://localhost" });
    expect(r.status, r.text).toBe(200);
    for (const c of r.headers.getSetCookie()) expect(c).toMatch(/; Secure/);
  });

  it("a wrong password and an unknown email get the same 401", async () => {
    const a = await signIn({ email: "eng@hq.example", password: "wrong password!!" });
    const b = await signIn({ email: "nobody@hq.example", password: "wrong password!!" });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    expect(a.json.error.message).toBe(b.json.error.message);
    expect(a.headers.getSetCookie()).toEqual([]);
  });

  it("a forged or foreign-key cookie is no session", async () => {
    const r = await call(subs.GET, { path: "/api/v1/subscriptions", headers: { cookie: "hl_session=Fe26.2**abc*def" } });
    expect(r.status).toBe(401);
  });

  it("refuses a sign-in posted from another site (login CSRF)", async () => {
    await createUser(db.prisma, { email: "x-site@hq.example", role: "admin", password: "correct horse battery" });
    const r = await signIn({ email: "x-site@hq.example", password: "correct horse battery" }, { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(r.status).toBe(403);
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  it(`rate-limits: after ${SIGN_IN_MAX_FAILURES} failures per email and IP, 429 with Retry-After, even with the right password`, async () => {
    await createUser(db.prisma, { email: "target@hq.example", role: "admin", password: "correct horse battery" });
    const ip = { [PEER_HEADER]: "203.0.113.7" };
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) expect((await signIn({ email: "target@hq.example", password: `guess-${i}-xxxxxxx` }, ip)).status).toBe(401);
    const limited = await signIn({ email: "target@hq.example", password: "correct horse battery" }, ip);
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe("rate_limited");
    expect(limited.json.error.message).toMatch(/Too many failed sign-ins/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is counted separately.
    const other = await signIn({ email: "target@hq.example", password: "correct horse battery" }, { [PEER_HEADER]: "198.51.100.9" });
    expect(other.status).toBe(200);
    expect(await db.prisma.signInAttempt.count({ where: { email: "target@hq.example", ip: "203.0.113.7" } })).toBe(SIGN_IN_MAX_FAILURES);
  });

  it(`caps failures per email from any address at ${SIGN_IN_MAX_FAILURES_PER_EMAIL} (rotating addresses buys nothing)`, async () => {
    await createUser(db.prisma, { email: "rotating@hq.example", role: "admin", password: "correct horse battery" });
    for (let i = 0; i < SIGN_IN_MAX_FAILURES_PER_EMAIL; i++)
      expect((await signIn({ email: "rotating@hq.example", password: `guess-${i}-xxxxxxx` }, { [PEER_HEADER]: `192.0.2.${i}` })).status).toBe(401);
    const limited = await signIn({ email: "rotating@hq.example", password: "correct horse battery" }, { [PEER_HEADER]: "192.0.2.250" });
    expect(limited.status).toBe(429);
  });

  it("a form post (no JavaScript) is redirected to a local `next` only", async () => {
    await createUser(db.prisma, { email: "form@hq.example", role: "support", password: "correct horse battery" });
    const body = new URLSearchParams({ email: "form@hq.example", password: "correct horse battery", next: "https://evil.example/" }).toString();
    const r = await call(handleSignIn, {
      rawBody: body,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost", host: "localhost" },
    });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/");
  });

  it("sign-out clears both cookies and needs the CSRF header", async () => {
    const r = await signIn({ email: "eng@hq.example", password: "correct horse battery" });
    const cookie = cookieJar(r.headers);
    const csrf = setCookies(r.headers)
      .find((c) => c.startsWith("hl_csrf="))!
      .split(";")[0]
      .slice("hl_csrf=".length);
    const refused = await call(handleSignOut, { method: "POST", headers: { cookie, origin: "http://localhost", host: "localhost" } });
    expect(refused.status).toBe(403);
    const ok = await call(handleSignOut, {
      method: "POST",
      headers: { cookie, origin: "http://localhost", host: "localhost", "x-hookledger-csrf": decodeURIComponent(csrf) },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.getSetCookie().every((c) => /Max-Age=0/.test(c))).toBe(true);
  });
});
