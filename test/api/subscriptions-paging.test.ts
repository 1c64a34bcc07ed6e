// GET /api/v1/subscriptions and the dashboard's health list, a page at a time:
// every order pages through every row exactly once (also while rows are
// inserted between pages), limit and cursor are checked (400 naming the field),
// q matches a name, id, URL or tenant without regard to case, and a principal
// confined to a tenant pages through its own tenant's rows only, whatever q,
// tenant or cursor say. The health figures are read for the page's rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { minutesAgo, seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import { createApiToken } from "../../lib/auth/tokens";
import * as list from "../../app/api/v1/subscriptions/route";
import * as health from "../../app/api/v1/dashboard/subscriptions/route";
import { SUBSCRIPTION_SORTS } from "../../lib/subscriptions/subscription-input";
import { startApiServer } from "../helpers/client-server";
import { HookledgerClient } from "../../client/src/index";
import { runCli } from "../helpers/cli-run";

let db: TestDb;
let support: string;
let lincoln: string;

// 240 subscriptions over 8 tenants (and 6 without one), names in mixed case so the order is case-insensitive, a
// few paused or disabled, 12 archived; created in one statement, so created_at ties and the id decides.
const TENANTS = ["lincoln", "jefferson", "riverside", "maple", "cedar", "westfield", "oak", "pine"];

beforeAll(async () => {
  db = await createTestDatabase();
  support = await tokenFor(db.prisma, "support");
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, state_reason, archived_at, archive_reason, archived_by)
     SELECT 'sub_' || lpad(g::text, 3, '0'),
            CASE WHEN g % 3 = 0 THEN 'district ' ELSE 'District ' END || chr(65 + g % 26) || ' ' || (g % 7),
            CASE WHEN g % 40 = 0 THEN NULL ELSE ($1::text[])[1 + g % 8] END,
            'https://hooks-' || g || '.example.test/in', ARRAY['assignment.graded'],
            CASE WHEN g % 11 = 0 THEN 'paused' WHEN g % 17 = 0 THEN 'disabled' ELSE 'active' END,
            CASE WHEN g % 11 = 0 OR g % 17 = 0 THEN 'test' END,
            CASE WHEN g % 20 = 1 THEN now() END, CASE WHEN g % 20 = 1 THEN 'retired' END, CASE WHEN g % 20 = 1 THEN 'test' END
       FROM generate_series(1, 240) g`,
    [TENANTS],
  );
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES
       ('sub_special', 'Oak Ridge 100% SIS', 'oak', 'https://oak-ridge.example.test/hooks', ARRAY['assignment.graded'])`,
  );
  // The tenants exist now (a subscription naming one registers it).
  lincoln = (await createApiToken(db.prisma, { role: "support", name: "lincoln", tenantId: "lincoln" })).token;
});
afterAll(async () => db?.close());

type Page = {
  items: { id: string; name: string; tenant: string | null; state: string; archivedAt: string | null }[];
  nextCursor: string | null;
  prevCursor: string | null;
};

async function get(route: typeof list | typeof health, query: string, token = support) {
  const base = route === list ? "/api/v1/subscriptions" : "/api/v1/dashboard/subscriptions";
  return call(route.GET, { token, path: `${base}?${query}` });
}

/** Every page of a query, following nextCursor; `between` runs after each page. */
async function pageThrough(route: typeof list | typeof health, query: string, token = support, between?: (n: number) => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await get(route, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, token);
    expect(r.status, r.text).toBe(200);
    const page = r.json as Page;
    ids.push(...page.items.map((s) => s.id));
    cursor = page.nextCursor;
    pages++;
    if (between) await between(pages);
  } while (cursor);
  return { ids, pages };
}

const ORDER_SQL: Record<string, string[]> = {
  name: ["lower(name)", "id"],
  tenant: ["coalesce(tenant, '')", "lower(name)", "id"],
  state: ["state", "lower(name)", "id"],
  created: ["created_at", "id"],
};

async function expected(sort: string, where = "archived_at IS NULL"): Promise<string[]> {
  const desc = sort.startsWith("-");
  const order = ORDER_SQL[sort.replace(/^-/, "")].map((c) => `${c} ${desc ? "DESC" : "ASC"}`).join(", ");
  return (await db.pool.query(`SELECT id FROM subscriptions WHERE ${where} ORDER BY ${order}`)).rows.map((r) => r.id);
}

describe("GET /api/v1/subscriptions pages", () => {
  it.each(SUBSCRIPTION_SORTS)("sort=%s: every subscription exactly once, in order, across pages of 37", async (sort) => {
    const { ids, pages } = await pageThrough(list, `limit=37&sort=${sort}`);
    const want = await expected(sort);
    expect(want.length).toBe(229);
    expect(ids).toEqual(want);
    expect(pages).toBe(Math.ceil(229 / 37));
  });

  it.each(["name", "-created", "tenant"])("sort=%s: prevCursor pages back through the same pages, and is null on the first", async (sort) => {
    const forward: Page[] = [];
    let cursor: string | null = null;
    do {
      const r = await get(list, `limit=30&sort=${sort}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      forward.push(r.json);
      cursor = r.json.nextCursor;
    } while (cursor);
    expect(forward[0].prevCursor).toBeNull();
    expect(forward.length).toBe(8);
    let back = forward.at(-1)!.prevCursor;
    for (let i = forward.length - 2; i >= 0; i--) {
      const r = await get(list, `limit=30&sort=${sort}&cursor=${encodeURIComponent(back!)}`);
      expect(r.json.items.map((x: { id: string }) => x.id)).toEqual(forward[i].items.map((x) => x.id));
      // From a page read backwards, nextCursor leads forwards again to the page it came from.
      const again = await get(list, `limit=30&sort=${sort}&cursor=${encodeURIComponent(r.json.nextCursor)}`);
      expect(again.json.items.map((x: { id: string }) => x.id)).toEqual(forward[i + 1].items.map((x) => x.id));
      back = r.json.prevCursor;
    }
    expect(back).toBeNull();
  });

  it("answers 100 by default with nextCursor, and nextCursor null on the last page", async () => {
    const first = await get(list, "");
    expect(first.status).toBe(200);
    expect(first.json.items).toHaveLength(100);
    expect(first.json.nextCursor).toEqual(expect.any(String));
    // The items keep the shape old callers read (a full subscription, never a secret).
    expect(first.json.items[0]).toMatchObject({ id: expect.any(String), url: expect.any(String), eventTypes: ["assignment.graded"], tls: { set: false } });
    expect(JSON.stringify(first.json)).not.toMatch(/whsec_/);
    const all = await get(list, "limit=500");
    expect(all.json.items).toHaveLength(229);
    expect(all.json.nextCursor).toBeNull();
    // A page that ends exactly at the last row: the next page is empty only if asked; nextCursor says there is none.
    const exact = await get(list, "limit=229");
    expect(exact.json.nextCursor).toBeNull();
  });

  it("every row present throughout is seen exactly once while subscriptions are inserted between pages", async () => {
    const before = await expected("name");
    let n = 0;
    const { ids } = await pageThrough(list, "limit=25&sort=name", support, async () => {
      // New rows on both sides of the cursor: before it (not seen, as keyset paging promises) and after it.
      n++;
      await db.pool.query(
        `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ($1, 'AAA early ' || $2::text, 'pine', 'https://x.example.test', ARRAY['a.b']),
                                                                            ($3, 'zzz late ' || $2::text, 'pine', 'https://y.example.test', ARRAY['a.b'])`,
        [`sub_ins_a${n}`, String(n), `sub_ins_z${n}`],
      );
    });
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids).toContain(id);
    // The rows inserted after the cursor had passed their place are never reached; those ahead of it are.
    expect(ids.filter((id) => id.startsWith("sub_ins_a"))).toEqual([]);
    expect(ids.filter((id) => id.startsWith("sub_ins_z")).length).toBeGreaterThan(0);
    await db.pool.query("DELETE FROM subscriptions WHERE id LIKE 'sub_ins_%'");
  });

  it("limit out of range or not a whole number: 400 naming query.limit", async () => {
    for (const bad of ["0", "501", "abc", "1.5", "-3", ""]) {
      const r = await get(list, `limit=${bad}`);
      expect(r.status, `limit=${bad}: ${r.text}`).toBe(400);
      expect(r.json.error.details.map((d: { path: string }) => d.path)).toContain("query.limit");
    }
    expect((await get(list, "limit=500")).status).toBe(200);
    expect((await get(list, "limit=1")).json.items).toHaveLength(1);
  });

  it("a cursor that is not one this list answered, or one of another sort: 400 naming query.cursor", async () => {
    const byName = (await get(list, "limit=5&sort=name")).json.nextCursor as string;
    const byCreated = (await get(list, "limit=5&sort=created")).json.nextCursor as string;
    const forged = Buffer.from(JSON.stringify(["created", "a", "not a time", "sub_001"])).toString("base64url");
    const short = Buffer.from(JSON.stringify(["name", "a", "x"])).toString("base64url");
    const sideways = Buffer.from(JSON.stringify(["name", "c", "x", "sub_001"])).toString("base64url");
    for (const [q, what] of [
      ["cursor=garbage!!", "not base64 JSON"],
      [`cursor=${byName}&sort=-name`, "a name cursor under -name"],
      [`cursor=${byName}&sort=created`, "a name cursor under created"],
      [`cursor=${forged}&sort=created`, "a created cursor whose time does not parse"],
      [`cursor=${short}&sort=name`, "too few keys"],
      [`cursor=${sideways}&sort=name`, "neither after nor before"],
      [`cursor=${Buffer.from("{}").toString("base64url")}`, "not a list"],
    ]) {
      const r = await get(list, q);
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(r.json.error.details[0].path).toBe("query.cursor");
    }
    expect((await get(list, `cursor=${byCreated}&sort=created`)).status).toBe(200);
  });

  it("unknown sort or parameter: 400", async () => {
    expect((await get(list, "sort=url")).status).toBe(400);
    expect((await get(list, "page=2")).status).toBe(400);
  });

  it("q matches a name, an id, a URL or a tenant, whatever the case; % and _ are literal", async () => {
    const ids = async (q: string) => ((await get(list, `limit=500&q=${encodeURIComponent(q)}`)).json as Page).items.map((s) => s.id);
    expect(await ids("oak ridge")).toEqual(["sub_special"]);
    expect(await ids("SUB_SPECIAL")).toEqual(["sub_special"]);
    expect(await ids("hooks-123.EXAMPLE")).toEqual(["sub_123"]);
    expect(await ids("oak-ridge")).toEqual(["sub_special"]);
    expect(await ids("100%")).toEqual(["sub_special"]);
    expect(await ids("_special")).toEqual(["sub_special"]);
    expect((await ids("ESTFIEL")).sort()).toEqual(await expected("name", "archived_at IS NULL AND tenant = 'westfield'").then((x) => x.sort()));
    expect(await ids("no such thing")).toEqual([]);
    // A match never spans two fields (the end of a name and the start of an id).
    expect(await ids("sis sub_special")).toEqual([]);
    expect((await get(list, "q=a%01b")).status).toBe(400);
  });

  it("q pages too, and keeps the other filters: tenant, state, archived", async () => {
    const { ids } = await pageThrough(list, "limit=7&q=district%20a&sort=-created");
    expect(ids).toEqual(await expected("-created", "archived_at IS NULL AND name ILIKE '%district a%'"));
    const paused = await pageThrough(list, "limit=4&state=paused&tenant=riverside");
    expect(paused.ids).toEqual(await expected("name", "archived_at IS NULL AND state = 'paused' AND tenant = 'riverside'"));
    expect(paused.ids.length).toBeGreaterThan(0);
    const withArchived = await pageThrough(list, "limit=50&archived=true");
    expect(withArchived.ids).toEqual(await expected("name", "true"));
  });

  it("a principal confined to a tenant pages through its own tenant only, whatever q, tenant or cursor say", async () => {
    const own = await expected("name", "archived_at IS NULL AND tenant = 'lincoln'");
    expect((await pageThrough(list, "limit=3", lincoln)).ids).toEqual(own);
    expect((await get(list, "q=jefferson", lincoln)).json.items).toEqual([]);
    expect((await get(list, "tenant=jefferson", lincoln)).json.items).toEqual([]);
    expect((await get(list, "q=sub_special", lincoln)).json.items).toEqual([]);
    // A cursor taken from a global listing starts a scoped page after that place, still in its own tenant only.
    const globalCursor = (await get(list, "limit=1&sort=name")).json.nextCursor;
    const r = await get(list, `limit=500&cursor=${globalCursor}`, lincoln);
    expect(r.status).toBe(200);
    expect(r.json.items.every((s: Page["items"][number]) => s.tenant === "lincoln")).toBe(true);
  });
});

describe("the dashboard's health list pages the same way", () => {
  it("pages through every subscription once, with the figures read for each page's rows", async () => {
    // A dead letter and a delivered attempt on a subscription that is on the last page by name.
    const last = (await expected("name")).at(-1)!;
    await seedEvent(db.pool, { id: "evt_health" });
    await seedDelivery(db.pool, {
      subscriptionId: last,
      eventId: "evt_health",
      state: "dead_letter",
      reason: "permanent",
      attempts: [{ at: minutesAgo(5), status: 422, errorClass: "http_4xx", outcome: "dead_letter", excerpt: "missing field term_id" }],
    });
    const { ids, pages } = await pageThrough(health, "limit=50");
    expect(ids).toEqual(await expected("name"));
    expect(pages).toBe(5);
    const page = await get(health, `limit=5&q=${last}`);
    expect(page.json.items).toHaveLength(1);
    expect(page.json.items[0]).toMatchObject({ id: last, counts: { deadLetter: 1 }, lastError: { statusCode: 422 } });
    const scoped = await pageThrough(health, "limit=2", lincoln);
    expect(scoped.ids).toEqual(await expected("name", "archived_at IS NULL AND tenant = 'lincoln'"));
  });

  it("bad input is a 400 there too", async () => {
    expect((await get(health, "limit=501")).status).toBe(400);
    expect((await get(health, "cursor=nope")).status).toBe(400);
  });
});

describe("the typed client pages", () => {
  it("subscriptions.list answers a page with nextCursor, and listAll follows it to the end", async () => {
    const server = await startApiServer();
    try {
      const client = new HookledgerClient({ baseUrl: server.url, token: support });
      const first = await client.subscriptions.list({ limit: 10, q: "district", sort: "-name" });
      expect(first.items).toHaveLength(10);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await client.subscriptions.list({ limit: 10, q: "district", sort: "-name", cursor: first.nextCursor! });
      const want = await expected("-name", "archived_at IS NULL AND name ILIKE '%district%'");
      expect([...first.items, ...second.items].map((s) => s.id)).toEqual(want.slice(0, 20));
      const all: string[] = [];
      for await (const sub of client.subscriptions.listAll({ limit: 30, q: "district", sort: "-name" })) all.push(sub.id);
      expect(all).toEqual(want);
    } finally {
      await server.close();
    }
  });
});

describe("hookledger subscriptions list", () => {
  it("prints every match, page after page, or stops at --limit", async () => {
    const all = await runCli(["subscriptions", "list", "--json", "--archived"], { DATABASE_URL: db.url });
    expect(all.code, all.stderr).toBe(0);
    const ids = all.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(await expected("name", "true"));
    const some = await runCli(["subscriptions", "list", "--q", "ESTFIELD", "--sort", "-created", "--limit", "3"], { DATABASE_URL: db.url });
    expect(some.code, some.stderr).toBe(0);
    const want = (await expected("-created", "archived_at IS NULL AND tenant = 'westfield'")).slice(0, 3);
    for (const id of want) expect(some.stdout).toContain(id);
    expect(some.stdout).toMatch(/3 subscriptions \(more match; --limit 3 stopped here\)/);
    const bad = await runCli(["subscriptions", "list", "--sort", "url"], { DATABASE_URL: db.url });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--sort/);
  });

  it("prints an endpoint URL's credentials masked, as the dashboard and the API show it (a terminal's output ends up in tickets)", async () => {
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types)
       VALUES ('sub_keyed', 'Keyed SIS', 'oak', 'https://sis:pa55word@keyed.example.test/in?code=s3cr3t&district=7', ARRAY['assignment.graded'])`,
    );
    try {
      for (const args of [
        ["--q", "keyed"],
        ["--q", "keyed", "--json"],
      ]) {
        const r = await runCli(["subscriptions", "list", ...args], { DATABASE_URL: db.url });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain("keyed.example.test/in?code=****&district=7");
        expect(r.stdout).not.toMatch(/s3cr3t|pa55word/);
      }
    } finally {
      await db.pool.query("DELETE FROM subscriptions WHERE id = 'sub_keyed'");
    }
  });
});
