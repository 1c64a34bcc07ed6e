// GET /api/v1/redrives and the typed client at more batches than a page: every batch is reached exactly once, newest
// first, across pages (none is cut off past a fixed number), including batches started in the same instant or within
// one millisecond; prevCursor pages back exactly; kind and status narrow the pages; limit, cursor and status are checked (400
// naming the field, nothing answered); a principal confined to a tenant pages through its own batches only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { createApiToken } from "../../lib/auth/tokens";
import * as redrives from "../../app/api/v1/redrives/route";
import { startApiServer } from "../helpers/client-server";
import { HookledgerClient } from "../../client/src/index";
import { listRedriveBatchPage } from "../../lib/redrive/redrive-batches";

let db: TestDb;
let support: string;
let scoped: string;
const N = 1_234;

type Page = { items: { id: string; kind: string; status: string; createdAt: string }[]; nextCursor: string | null; prevCursor: string | null };

beforeAll(async () => {
  db = await createTestDatabase();
  support = await tokenFor(db.prisma, "support");
  await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('d1', 'District 1')`);
  scoped = (await createApiToken(db.prisma, { role: "support", name: "d1-support", tenantId: "d1" })).token;
  // Four batches to an instant, and instants 250 µs apart: four of them within one millisecond, which a cursor carrying a
  // JavaScript Date (milliseconds) would skip or repeat. Every fifth a recover, every seventh cancelled, every tenth d1's.
  await db.pool.query(
    `INSERT INTO redrive_batches (id, reason, actor, rate_per_second, kind, status, tenant_id, created_at, updated_at)
     SELECT 'rdb_t' || lpad(g::text, 5, '0'), 'INC-' || g, 'user:t', 10,
            CASE WHEN g % 5 = 0 THEN 'recover' ELSE 'redrive' END, CASE WHEN g % 7 = 0 THEN 'cancelled' ELSE 'done' END,
            CASE WHEN g % 10 = 0 THEN 'd1' END,
            timestamptz '2026-11-01T00:00:00Z' - (g / 4) * interval '250 microseconds', now()
       FROM generate_series(1, $1::int) g`,
    [N],
  );
  // A portal opened for one subscription sees the batches whose filter names it.
  await db.pool.query(`UPDATE redrive_batches SET filter = '{"subscriptionId": "sub_one"}' WHERE tenant_id = 'd1' AND right(id, 2)::int % 4 = 0`);
});
afterAll(async () => db?.close());

/** The batches in the order the list promises, read independently: newest first, then by id from the end. */
async function expected(where = "true"): Promise<string[]> {
  return (await db.pool.query(`SELECT id FROM redrive_batches WHERE ${where} ORDER BY created_at DESC, id DESC`)).rows.map((r) => r.id);
}

async function pageThrough(query: string, token = support) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await call(redrives.GET, { token, path: `/api/v1/redrives?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}` });
    expect(r.status, r.text).toBe(200);
    const page = r.json as Page;
    seen.push(...page.items.map((b) => b.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { seen, pages };
}

describe("GET /api/v1/redrives pages", () => {
  it("reaches every batch exactly once, newest first, a page at a time (default 100, at most 500)", async () => {
    const first = await call(redrives.GET, { token: support, path: "/api/v1/redrives" });
    expect(first.status, first.text).toBe(200);
    const p = first.json as Page;
    expect(p.items).toHaveLength(100);
    expect(p.nextCursor).toEqual(expect.any(String));
    expect(p.prevCursor).toBeNull();
    const all = await expected();
    expect(all).toHaveLength(N);
    const { seen, pages } = await pageThrough("limit=500");
    expect(pages).toBe(Math.ceil(N / 500));
    expect(seen).toEqual(all);
    // Small pages cross every shared instant and millisecond.
    expect((await pageThrough("limit=3")).seen).toEqual(all);
  });

  it("prevCursor pages back to exactly the page before; the first page has none", async () => {
    const get = async (q: string) => (await call(redrives.GET, { token: support, path: `/api/v1/redrives?${q}` })).json as Page;
    const p1 = await get("limit=7");
    const p2 = await get(`limit=7&cursor=${encodeURIComponent(p1.nextCursor!)}`);
    const p3 = await get(`limit=7&cursor=${encodeURIComponent(p2.nextCursor!)}`);
    const back2 = await get(`limit=7&cursor=${encodeURIComponent(p3.prevCursor!)}`);
    expect(back2.items.map((b) => b.id)).toEqual(p2.items.map((b) => b.id));
    expect(back2.nextCursor).toEqual(expect.any(String));
    const back1 = await get(`limit=7&cursor=${encodeURIComponent(back2.prevCursor!)}`);
    expect(back1.items.map((b) => b.id)).toEqual(p1.items.map((b) => b.id));
    expect(back1.prevCursor).toBeNull();
  });

  it("kind and status narrow every page", async () => {
    expect((await pageThrough("kind=recover&limit=50")).seen).toEqual(await expected("kind = 'recover'"));
    expect((await pageThrough("status=cancelled&kind=redrive&limit=20")).seen).toEqual(await expected("status = 'cancelled' AND kind = 'redrive'"));
  });

  it("a principal confined to a tenant pages through its own batches only, whatever the cursor says", async () => {
    expect((await pageThrough("limit=30", scoped)).seen).toEqual(await expected("tenant_id = 'd1'"));
    // A cursor from a global page: the tenant's batches after it, nobody else's.
    const global = (await call(redrives.GET, { token: support, path: "/api/v1/redrives?limit=55" })).json as Page;
    const after = await call(redrives.GET, { token: scoped, path: `/api/v1/redrives?limit=500&cursor=${encodeURIComponent(global.nextCursor!)}` });
    expect(after.status, after.text).toBe(200);
    const mine = await expected("tenant_id = 'd1'");
    expect((after.json as Page).items.map((b) => b.id)).toEqual(mine.filter((id) => !global.items.some((b) => b.id === id)));
    const portal = { tenantId: "d1", subscriptionId: "sub_one" };
    const one = await expected(`tenant_id = 'd1' AND filter @> '{"subscriptionId": "sub_one"}'`);
    expect(one.length).toBeGreaterThan(5);
    const p1 = await listRedriveBatchPage(db.prisma, { limit: 5 }, portal);
    const p2 = await listRedriveBatchPage(db.prisma, { limit: 500, cursor: p1.nextCursor! }, portal);
    expect([...p1.items, ...p2.items].map((b) => b.id)).toEqual(one);
  });

  it("a bad cursor, limit or status is a 400 naming the field", async () => {
    const b64 = (x: unknown) => Buffer.from(JSON.stringify(x)).toString("base64url");
    for (const [query, field] of [
      ["cursor=nonsense", "query.cursor"],
      [`cursor=${b64(["t", "d00001"])}`, "query.cursor"],
      [`cursor=${b64(["rdb", "a", "yesterday", "rdb_t00001"])}`, "query.cursor"],
      [`cursor=${b64(["rdb", "x", "2026-11-01 00:00:00+00", "rdb_t00001"])}`, "query.cursor"],
      ["limit=0", "query.limit"],
      ["limit=501", "query.limit"],
      ["limit=ten", "query.limit"],
      ["sort=name", "query"],
      ["status=canceled", "query.status"],
    ]) {
      const r = await call(redrives.GET, { token: support, path: `/api/v1/redrives?${query}` });
      expect(r.status, `${query}: ${r.text}`).toBe(400);
      expect(r.text, query).toContain(field);
    }
  });
});

describe("the typed client", () => {
  it("redrives.list answers a page and redrives.listAll follows nextCursor to the end", async () => {
    const server = await startApiServer();
    try {
      const client = new HookledgerClient({ baseUrl: server.url, token: support });
      const all = await expected();
      const first = await client.redrives.list({ limit: 2 });
      expect(first.items.map((b) => b.id)).toEqual(all.slice(0, 2));
      expect(first.nextCursor).toEqual(expect.any(String));
      const seen: string[] = [];
      for await (const b of client.redrives.listAll({ limit: 500 })) seen.push(b.id);
      expect(seen).toEqual(all);
    } finally {
      await server.close();
    }
  });
});
