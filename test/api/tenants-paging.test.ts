// GET /api/v1/tenants, the typed client and `hookledger tenant list` at thousands of districts: every tenant is
// reached exactly once across pages (none is cut off past a fixed number), limit and cursor are checked (400 naming
// the field, nothing answered), q matches an id or a name without regard to case, and an admin confined to a tenant
// pages through its own tenant only, whatever q or cursor say.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { createApiToken } from "../../lib/auth/tokens";
import * as tenants from "../../app/api/v1/tenants/route";
import { startApiServer } from "../helpers/client-server";
import { HookledgerClient } from "../../client/src/index";
import { runCli } from "../helpers/cli-run";
import { listTenantPage } from "../../lib/tenants/manage-tenants";
import { SYSTEM } from "../../lib/auth/principal";
import { TENANT_SUGGESTIONS, findTenants } from "../../lib/dashboard/subscriptions";
import { GLOBAL_SCOPE } from "../../lib/tenants/scope";

let db: TestDb;
let admin: string;
let scoped: string;
// More than the 5,000 the list used to stop at.
const N = 5_150;
const ids = Array.from({ length: N }, (_, i) => `d${String(i + 1).padStart(5, "0")}`);

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  await db.pool.query(
    `INSERT INTO tenants (id, name) SELECT 'd' || lpad(g::text, 5, '0'), CASE WHEN g = 5123 THEN 'Riverbend Unified' ELSE 'District ' || g END FROM generate_series(1, $1::int) g`,
    [N],
  );
  scoped = (await createApiToken(db.prisma, { role: "admin", name: "d00042-admin", tenantId: "d00042" })).token;
});
afterAll(async () => db?.close());

type Page = { items: { id: string; name: string; createdAt: string }[]; nextCursor: string | null };

async function pageThrough(query: string, token = admin) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await call(tenants.GET, { token, path: `/api/v1/tenants?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}` });
    expect(r.status, r.text).toBe(200);
    const page = r.json as Page;
    seen.push(...page.items.map((t) => t.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { seen, pages };
}

describe("GET /api/v1/tenants pages", () => {
  it("reaches every tenant exactly once, in id order, a page at a time (default 100, at most 500)", async () => {
    const first = await call(tenants.GET, { token: admin, path: "/api/v1/tenants" });
    expect(first.status, first.text).toBe(200);
    expect((first.json as Page).items).toHaveLength(100);
    expect((first.json as Page).nextCursor).toEqual(expect.any(String));
    const { seen, pages } = await pageThrough("limit=500");
    expect(pages).toBe(Math.ceil(N / 500));
    expect(seen).toEqual(ids);
  });

  it("q matches the id or the name, any case", async () => {
    expect((await pageThrough("q=RIVERBEND")).seen).toEqual(["d05123"]);
    const { seen } = await pageThrough("q=d0510&limit=3");
    expect(seen).toEqual(ids.filter((id) => id.includes("d0510")));
  });

  it("an admin confined to a tenant is refused by the API (403); the list itself holds its own tenant only, whatever q or cursor say", async () => {
    const r = await call(tenants.GET, { token: scoped, path: "/api/v1/tenants" });
    expect(r.status, r.text).toBe(403);
    const principal = { kind: "token" as const, id: "tok_x", role: "admin" as const, actor: "token:x", tenantId: "d00042" };
    expect((await listTenantPage(db.prisma, principal, { limit: 500 })).items.map((t) => t.id)).toEqual(["d00042"]);
    expect((await listTenantPage(db.prisma, principal, { q: "District" })).items.map((t) => t.id)).toEqual(["d00042"]);
    const p1 = await listTenantPage(db.prisma, SYSTEM, { limit: 10 });
    expect((await listTenantPage(db.prisma, principal, { cursor: p1.nextCursor! })).items.map((t) => t.id)).toEqual(["d00042"]);
    // Past its own id, nothing.
    const past = await listTenantPage(db.prisma, SYSTEM, { limit: 100 });
    expect(await listTenantPage(db.prisma, principal, { cursor: past.nextCursor! })).toEqual({ items: [], nextCursor: null });
  });

  it("a bad cursor or limit is a 400 naming the field", async () => {
    for (const [query, field] of [
      ["cursor=nonsense", "query.cursor"],
      [`cursor=${Buffer.from(JSON.stringify(["name", "a", "x"])).toString("base64url")}`, "query.cursor"],
      ["limit=0", "query.limit"],
      ["limit=501", "query.limit"],
      ["limit=ten", "query.limit"],
      ["sort=name", "query"],
    ]) {
      const r = await call(tenants.GET, { token: admin, path: `/api/v1/tenants?${query}` });
      expect(r.status, `${query}: ${r.text}`).toBe(400);
      expect(r.text, query).toContain(field);
    }
  });
});

describe("the typed client and the CLI list every tenant", () => {
  it("tenants.list answers a page and tenants.listAll follows nextCursor to the end", async () => {
    const server = await startApiServer();
    try {
      const client = new HookledgerClient({ baseUrl: server.url, token: admin });
      const first = await client.tenants.list({ limit: 2, q: "d0000" });
      expect(first.items.map((t) => t.id)).toEqual(["d00001", "d00002"]);
      const all: string[] = [];
      for await (const t of client.tenants.listAll({ limit: 500 })) all.push(t.id);
      expect(all).toEqual(ids);
    } finally {
      await server.close();
    }
  });

  it("hookledger tenant list prints them all, past one page; --q narrows", async () => {
    const all = await runCli(["tenant", "list"], { DATABASE_URL: db.url });
    expect(all.code, all.stderr).toBe(0);
    expect(
      all.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("\t")[0]),
    ).toEqual(ids);
    const some = await runCli(["tenant", "list", "--q", "riverbend"], { DATABASE_URL: db.url });
    expect(some.stdout).toBe("d05123\tRiverbend Unified\n");
    const none = await runCli(["tenant", "list", "--q", "no such district"], { DATABASE_URL: db.url });
    expect(none).toMatchObject({ code: 0, stdout: 'No tenant\'s id or name contains "no such district".\n' });
  });
});

describe("the subscriptions page's tenant suggestions", () => {
  it("say when they are cut: the first 500 tenants with a subscription, and that there are more", async () => {
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types)
       SELECT 'sub_s' || g, 'S ' || g, 'd' || lpad(g::text, 5, '0'), 'https://s.example.test/h', ARRAY['x.y'] FROM generate_series(1, $1::int) g`,
      [TENANT_SUGGESTIONS + 1],
    );
    try {
      const got = await findTenants(db.pool, GLOBAL_SCOPE);
      expect(got.ids).toEqual(ids.slice(0, TENANT_SUGGESTIONS));
      expect(got.more).toBe(true);
      expect(await findTenants(db.pool, { tenantId: "d00042" })).toEqual({ ids: ["d00042"], more: false });
    } finally {
      await db.pool.query("DELETE FROM subscriptions WHERE id LIKE 'sub_s%'");
    }
  });
});
