// Generated from the permission table: every /api/v1 route file (found by
// globbing app/api/v1) × every exported method × every role, with a bearer
// token and (for people) a signed-in session → allowed, or 401/403 as
// ROLE_PERMISSIONS says. A handler that declares no permission fails the test,
// and so does a route outside /api/v1 that is not on the short public list.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { v1RouteFiles } from "../helpers/client-server";
import { call, tokenFor } from "../helpers/api";
import { ROLES, ROLE_PERMISSIONS, can, type Permission, type Role } from "../../lib/auth/permissions";
import { createUser, USER_ROLES } from "../../lib/auth/users";
import { newSession, sessionSetCookies } from "../../lib/auth/cookies";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
/** Routes outside /api/v1 that answer without a session or token, on purpose. */
const PUBLIC_ROUTES = new Set([
  "app/api/health/route.ts", // docs/API.md: no token needed
  "app/metrics/route.ts", // Prometheus scrapes it
  "app/api/auth/signin/route.ts",
  "app/api/auth/signout/route.ts",
  "app/api/auth/session/route.ts",
  "app/portal/open/route.ts", // the link's signed, single-use token is the credential (lib/portal)
]);
/** Routes outside /api/v1 that check a signed-in session themselves (not through apiRoute): each is called below without one. */
const SESSION_ROUTES = new Set(["app/api/auth/password/route.ts"]);

type Entry = { file: string; urlPath: string; params: Record<string, string>; method: (typeof METHODS)[number]; fn: any; permission: Permission | undefined };

/** /api/v1 routes that answer without credentials on purpose; test/api/openapi.test.ts checks each. */
const PUBLIC_V1_ROUTES = new Set(["app/api/v1/openapi.json/route.ts"]);
const files = v1RouteFiles().filter((f) => !PUBLIC_V1_ROUTES.has(f));
const entries: Entry[] = [];

let db: TestDb;
const tokens = new Map<Role, string>();
const sessions = new Map<Role, { cookie: string; csrf: string }>();

beforeAll(async () => {
  db = await createTestDatabase();
  for (const file of files) {
    const mod = await import(/* @vite-ignore */ path.resolve(file));
    const rel = path.dirname(path.relative("app", file));
    const params: Record<string, string> = {};
    const urlPath = "/" + rel.replace(/\[(\w+)\]/g, (_, name: string) => ((params[name] = `matrix_${name}`), params[name]));
    for (const method of METHODS) {
      if (typeof mod[method] !== "function") continue;
      entries.push({ file, urlPath, params, method, fn: mod[method], permission: mod[method].permission });
    }
  }
  for (const role of ROLES) tokens.set(role, await tokenFor(db.prisma, role));
  for (const role of USER_ROLES) {
    const u = await createUser(db.prisma, { email: `${role}@matrix.example`, role });
    const data = newSession(u.id);
    const set = await sessionSetCookies(data, false);
    sessions.set(role, { cookie: set.map((c) => c.split(";")[0]).join("; "), csrf: data.csrf });
  }
});
afterAll(async () => db?.close());

function request(e: Entry, auth: { token?: string; session?: { cookie: string; csrf: string } }) {
  const mutation = !["GET", "HEAD"].includes(e.method);
  const headers: Record<string, string> = { host: "localhost" };
  if (auth.session) {
    headers.cookie = auth.session.cookie;
    if (mutation) Object.assign(headers, { origin: "http://localhost", "sec-fetch-site": "same-origin", "x-hookledger-csrf": auth.session.csrf });
  }
  return call(e.fn, { method: e.method, path: e.urlPath, token: auth.token, params: e.params, headers, body: mutation ? {} : undefined });
}

describe("permission matrix", () => {
  it("finds the /api/v1 routes", () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(entries.length).toBeGreaterThanOrEqual(files.length);
  });

  it("every /api/v1 handler declares a permission from the table (apiRoute attaches it)", () => {
    const missing = entries.filter((e) => !e.permission || !(e.permission in ROLE_PERMISSIONS)).map((e) => `${e.method} ${e.file}`);
    expect(missing, "route handlers without a permission rule: wrap them in apiRoute(permission, …)").toEqual([]);
  });

  it("every route outside /api/v1 is on the public list", () => {
    const others = v1RouteFiles("app").filter((f) => !f.startsWith(path.join("app", "api", "v1")));
    expect(others.filter((f) => !PUBLIC_ROUTES.has(f) && !SESSION_ROUTES.has(f))).toEqual([]);
  });

  it("a route that checks its own session refuses a request without one, and a bearer token", async () => {
    for (const f of SESSION_ROUTES) {
      const mod = (await import(path.resolve(f))) as Record<string, unknown>;
      for (const method of METHODS.filter((m) => typeof mod[m] === "function")) {
        const fn = mod[method] as Parameters<typeof call>[0];
        const body = { currentPassword: "x".repeat(12), newPassword: "y".repeat(16) };
        expect((await call(fn, { method, path: "/", body })).status, `${method} ${f}`).toBe(401);
        expect((await call(fn, { method, path: "/", body, token: await tokenFor(db.prisma, "admin") })).status, `${method} ${f} by token`).toBe(401);
      }
    }
  });

  it("no credentials → 401 everywhere; a bad token → 401", async () => {
    for (const e of entries) {
      expect((await request(e, {})).status, `${e.method} ${e.urlPath}`).toBe(401);
      expect((await request(e, { token: "hl_not_a_token" })).status, `${e.method} ${e.urlPath}`).toBe(401);
    }
  });

  it("every role × every route, by bearer token and by session: allowed, or 403 as the table says", async () => {
    const wrong: string[] = [];
    for (const e of entries) {
      for (const role of ROLES) {
        const allowed = can(role, e.permission!);
        const ways: [string, Parameters<typeof request>[1]][] = [["token", { token: tokens.get(role) }]];
        if (sessions.has(role)) ways.push(["session", { session: sessions.get(role) }]);
        for (const [how, auth] of ways) {
          const r = await request(e, auth);
          const ok = allowed ? r.status !== 401 && r.status !== 403 && r.status < 500 : r.status === 403;
          if (!ok) wrong.push(`${e.method} ${e.urlPath} as ${role} (${how}, needs ${e.permission}): ${r.status} ${r.text.slice(0, 160)}`);
          // A refusal says what the caller tried and whom to ask, in words: not the permission's key.
          else if (!allowed) {
            const message = String((JSON.parse(r.text) as { error?: { message?: string } }).error?.message);
            const takes = `that takes the `;
            if (message.includes(e.permission!) || !message.startsWith(`The ${role} role may not `) || !message.includes(takes))
              wrong.push(`${e.method} ${e.urlPath} as ${role} (${how}): 403 reads "${message}"`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
