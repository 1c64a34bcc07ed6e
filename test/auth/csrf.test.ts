// CSRF: a cookie-authenticated mutation needs a same-origin request and the
// x-hookledger-csrf header matching both the hl_csrf cookie and the session.
// A cross-site form post carries the cookie but can do neither: 403, nothing changes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import { createUser } from "../../lib/auth/users";
import { newSession, sessionSetCookies } from "../../lib/auth/cookies";

let db: TestDb;
let cookie: string;
let csrf: string;
let sessionCookieOnly: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const u = await createUser(db.prisma, { email: "manager@csrf.example", role: "manager" });
  const data = newSession(u.id);
  const set = await sessionSetCookies(data, false);
  cookie = set.map((c) => c.split(";")[0]).join("; ");
  sessionCookieOnly = set[0].split(";")[0];
  csrf = data.csrf;
  const admin = await tokenFor(db.prisma, "admin");
  const r = await call(subs.POST, { token: admin, body: { id: "sub_csrf", name: "Lincoln", url: "https://lincoln.example.test/h", eventTypes: ["assignment.graded"] } });
  expect(r.status).toBe(201);
});
afterAll(async () => db?.close());

const form = new URLSearchParams({ name: "Evil", url: "https://evil.example/h", "eventTypes[]": "assignment.graded" }).toString();

describe("cookie-authenticated mutations", () => {
  it("a cross-site HTML form post (cookie sent, foreign Origin, no header) is refused 403 and changes nothing", async () => {
    const before = await tableCounts(db.pool);
    const r = await call(subs.POST, {
      rawBody: form,
      headers: {
        cookie,
        host: "hookledger.example",
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe("forbidden");
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("a cross-site post is refused even if it somehow carries the right token (Origin / Sec-Fetch-Site)", async () => {
    const before = await tableCounts(db.pool);
    const foreign: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "null" },
    ];
    for (const h of foreign) {
      const r = await call(sub.PATCH, {
        method: "PATCH",
        params: { id: "sub_csrf" },
        body: { state: "paused" },
        headers: { cookie, host: "hookledger.example", "x-hookledger-csrf": csrf, ...h },
      });
      expect(r.status, JSON.stringify(h)).toBe(403);
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.prisma.subscription.findUniqueOrThrow({ where: { id: "sub_csrf" } })).state).toBe("active");
  });

  it("same-origin without the header, with a wrong one, or with a planted cookie+header pair → 403", async () => {
    const same = { host: "hookledger.example", origin: "http://hookledger.example", "sec-fetch-site": "same-origin" };
    const cases: Record<string, string>[] = [
      { cookie, ...same },
      { cookie, ...same, "x-hookledger-csrf": "guess" },
      // A sibling subdomain can plant hl_csrf; the token sealed in the session still disagrees.
      { cookie: `${sessionCookieOnly}; hl_csrf=planted`, ...same, "x-hookledger-csrf": "planted" },
    ];
    for (const headers of cases) {
      const r = await call(sub.PATCH, { method: "PATCH", params: { id: "sub_csrf" }, body: { state: "paused" }, headers });
      expect(r.status).toBe(403);
      expect(r.json.error.message).toMatch(/CSRF/);
    }
    expect((await db.prisma.subscription.findUniqueOrThrow({ where: { id: "sub_csrf" } })).state).toBe("active");
  });

  it("our own page (same origin, header echoing the cookie) succeeds, and the audit row names the user", async () => {
    const r = await call(sub.PATCH, {
      method: "PATCH",
      params: { id: "sub_csrf" },
      body: { state: "paused", reason: "district maintenance" },
      headers: { cookie, host: "hookledger.example", origin: "http://hookledger.example", "sec-fetch-site": "same-origin", "x-hookledger-csrf": csrf },
    });
    expect(r.status, r.text).toBe(200);
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "subscription.pause", targetId: "sub_csrf" } });
    expect(audit.actor).toBe("user:manager@csrf.example");
  });

  it("reads need no CSRF token", async () => {
    const r = await call(sub.GET, { params: { id: "sub_csrf" }, headers: { cookie, host: "hookledger.example", "sec-fetch-site": "same-origin" } });
    expect(r.status).toBe(200);
  });

  it("bearer-token calls need no CSRF token (no ambient credential)", async () => {
    const manager = await tokenFor(db.prisma, "manager");
    const r = await call(sub.PATCH, {
      method: "PATCH",
      token: manager,
      params: { id: "sub_csrf" },
      body: { state: "active" },
      headers: { origin: "https://ci.example" },
    });
    expect(r.status, r.text).toBe(200);
  });
});
