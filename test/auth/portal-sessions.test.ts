// District portal links: minted by an admin or a `portal` token, opened once by a browser that then acts as the
// district (tenant-scoped, one subscription when asked) until the link's expiry or its revocation; everything it does
// is audited as portal:<tenant>; its pages may be framed only by the configured origins.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import * as portalSessions from "../../app/api/v1/portal/sessions/route";
import * as portalSession from "../../app/api/v1/portal/sessions/[id]/route";
import * as open from "../../app/portal/open/route";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import * as secrets from "../../app/api/v1/subscriptions/[id]/secrets/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import * as lookup from "../../app/api/v1/dashboard/lookup/route";
import * as tenants from "../../app/api/v1/tenants/route";
import * as retention from "../../app/api/v1/retention/route";
import * as erasures from "../../app/api/v1/erasures/route";
import * as contacts from "../../app/api/v1/tenants/[id]/contacts/route";
import { proxy } from "../../proxy";
import { createApiToken } from "../../lib/auth/tokens";
import { createUser } from "../../lib/auth/users";
import { SYSTEM, principalFromSessionCookie } from "../../lib/auth/principal";
import { canAs, GLOBAL_ONLY_PERMISSIONS } from "../../lib/auth/permissions";
import { SESSION_COOKIE, newSession, parseCookies, sessionSetCookies } from "../../lib/auth/cookies";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { parseFrameAncestors } from "../../lib/portal/frame-ancestors";

const A = "lincoln";
const B = "jefferson";
const SUB_A1 = "sub_portal_a1";
const SUB_A2 = "sub_portal_a2";
const SUB_B = "sub_portal_b";
const FRAMES = "HOOKLEDGER_PORTAL_FRAME_ANCESTORS";

let db: TestDb;
let admin: string;
let portalToken: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ($1, 'Lincoln USD'), ($2, 'Jefferson County')", [A, B]);
  for (const [id, tenant, name] of [
    [SUB_A1, A, "Lincoln SIS"],
    [SUB_A2, A, "Lincoln LMS"],
    [SUB_B, B, "Jefferson SIS"],
  ])
    await createSubscription(db.prisma, { id, name, url: `https://${id}.example.test/h`, eventTypes: ["assignment.graded"], tenant }, SYSTEM);
  const at = new Date(Date.now() - 3600_000);
  for (const [evt, tenant, subId] of [
    ["evt_portal_a1", A, SUB_A1],
    ["evt_portal_a2", A, SUB_A2],
    ["evt_portal_b", B, SUB_B],
  ]) {
    await seedEvent(db.pool, { id: evt, subject: { tenant } });
    await seedDelivery(db.pool, { subscriptionId: subId, eventId: evt, state: "delivered", attempts: [{ at, status: 200, outcome: "delivered" }] });
  }
  // An event of A's that no subscription took: the tenant's, no subscription's.
  await seedEvent(db.pool, { id: "evt_portal_unrouted", subject: { tenant: A } });
  admin = await tokenFor(db.prisma, "admin");
  portalToken = await tokenFor(db.prisma, "portal");
});
afterAll(async () => db?.close());
afterEach(() => {
  delete process.env[FRAMES];
});

const countRows = async (table: "portal_sessions" | "audit_entries") => Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n);

async function mint(body: Record<string, unknown>, token = admin) {
  return call(portalSessions.POST, { method: "POST", path: "/api/v1/portal/sessions", token, body, headers: { host: "localhost" } });
}

/** What a GET of the link answers: a page whose form posts the token back (nothing spent), or a redirect. */
async function fetchLink(url: string) {
  const u = new URL(url);
  const res = await open.GET(new Request(`http://localhost${u.pathname}${u.search}`, { headers: { host: "localhost" } }));
  return { res, html: res.status === 200 ? await res.text() : null };
}

/** The second step: the page's form, POSTed as a browser sends it. */
async function postToken(token: string | null, contentType = "application/x-www-form-urlencoded") {
  const res = await open.POST(
    new Request("http://localhost/portal/open", {
      method: "POST",
      headers: { host: "localhost", "content-type": contentType },
      body: token === null ? "" : new URLSearchParams({ token }).toString(),
    }),
  );
  const setCookies = res.headers.getSetCookie();
  // What the browser then sends: the cookies set, not the ones removed (Max-Age=0).
  const kept = setCookies.filter((c) => !c.includes("Max-Age=0"));
  const cookie = kept.length ? kept.map((c) => c.split(";")[0]).join("; ") : null;
  return { status: res.status, location: res.headers.get("location"), setCookies, cookie };
}

/** Opens a link as a browser would: its page, then its form; the last answer's redirect and the cookie header it sets (null when none). */
async function openLink(url: string) {
  const { res, html } = await fetchLink(url);
  if (!html) return { status: res.status, location: res.headers.get("location"), setCookies: res.headers.getSetCookie(), cookie: null };
  const form = /<form id="open" method="post" action="\/portal\/open">\s*<input type="hidden" name="token" value="([A-Za-z0-9_-]+)">/.exec(html);
  expect(form, html).not.toBeNull();
  return postToken(form![1]);
}

/** A browser's API call with the portal cookie; mutations carry the CSRF header as the dashboard's fetch does. */
function asBrowser(cookie: string, mutation = false) {
  const csrf = parseCookies(cookie).hl_csrf;
  return {
    cookie,
    host: "localhost",
    ...(mutation ? { origin: "http://localhost", "sec-fetch-site": "same-origin", "x-hookledger-csrf": csrf } : {}),
  };
}

describe("creating a portal link", () => {
  it("an admin and a portal token get 201 {id, url, expiresAt}; the link is stored hashed and audited", async () => {
    for (const token of [admin, portalToken]) {
      const before = Date.now();
      const r = await mint({ tenant: A }, token);
      expect(r.status, r.text).toBe(201);
      expect(r.json.id).toMatch(/^ps_[0-9a-f]{16}$/);
      expect(r.json.url).toMatch(/^http:\/\/localhost\/portal\/open\?token=[A-Za-z0-9_-]{60,90}$/);
      // The default hour.
      expect(Math.abs(Date.parse(r.json.expiresAt) - before - 3600_000)).toBeLessThan(10_000);
      const token2 = new URL(r.json.url).searchParams.get("token")!;
      const row = (await db.pool.query("SELECT * FROM portal_sessions WHERE id = $1", [r.json.id])).rows[0];
      expect(row.tenant).toBe(A);
      expect(JSON.stringify(row)).not.toContain(token2);
      const audit = (await db.pool.query("SELECT actor, tenant_id, details FROM audit_entries WHERE action = 'portal.session.create' AND target_id = $1", [r.json.id]))
        .rows;
      expect(audit).toHaveLength(1);
      expect(audit[0].tenant_id).toBe(A);
      expect(audit[0].actor).toMatch(/^token:test-(admin|portal)$/);
    }
  });

  it("managers, engineers, producers and support are refused 403; so is an admin confined to a tenant", async () => {
    const before = [await countRows("portal_sessions"), await countRows("audit_entries")];
    for (const role of ["manager", "engineer", "producer", "support"] as const) {
      const r = await mint({ tenant: A }, await tokenFor(db.prisma, role));
      expect(r.status, role).toBe(403);
    }
    const scoped = (await createApiToken(db.prisma, { role: "admin", name: "lincoln-admin", tenantId: A })).token;
    expect((await mint({ tenant: A }, scoped)).status).toBe(403);
    const scopedPortal = (await createApiToken(db.prisma, { role: "portal", name: "lincoln-portal", tenantId: A })).token;
    expect((await mint({ tenant: A }, scopedPortal)).status).toBe(403);
    expect([await countRows("portal_sessions"), await countRows("audit_entries")]).toEqual(before);
  });

  it("bad input: 400 for a life of 0 or over a day and for another tenant's subscription, 404 for an unknown tenant; nothing written", async () => {
    const before = await countRows("portal_sessions");
    const zero = await mint({ tenant: A, expiresInSeconds: 0 });
    expect(zero.status).toBe(400);
    expect(zero.json.error.details[0].path).toBe("body.expiresInSeconds");
    expect((await mint({ tenant: A, expiresInSeconds: 86_401 })).status).toBe(400);
    expect((await mint({ tenant: A, expiresInSeconds: 86_400 })).status).toBe(201);
    const unknown = await mint({ tenant: "nowhere" });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toContain("nowhere");
    const foreign = await mint({ tenant: A, subscriptionId: SUB_B });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error.details[0].path).toBe("body.subscriptionId");
    expect((await mint({ tenant: A, subscriptionId: "sub_nope" })).status).toBe(400);
    expect((await mint({})).status).toBe(400);
    expect((await mint({ tenant: A, extra: 1 })).status).toBe(400);
    // The one good request (a day exactly) wrote its row; none of the refused ones did.
    expect(await countRows("portal_sessions")).toBe(before + 1);
  });
});

describe("opening a link", () => {
  it("opens once: the first browser gets a tenant-scoped manager session, the second is sent to the sign-in page", async () => {
    const link = await mint({ tenant: A });
    const first = await openLink(link.json.url);
    expect(first.status).toBe(303);
    expect(first.location).toBe("/");
    expect(first.cookie).toContain(`${SESSION_COOKIE}=`);
    const p = await principalFromSessionCookie(parseCookies(first.cookie!)[SESSION_COOKIE]);
    expect(p).toMatchObject({ kind: "portal", role: "manager", tenantId: A, actor: `portal:${A}`, subscriptionId: null });
    const second = await openLink(link.json.url);
    expect(second).toMatchObject({ status: 303, location: "/signin?portal=used", cookie: null });
  });

  it("a GET of the link (a mail system scanning it) spends nothing: the page's form opens it afterwards", async () => {
    const link = await mint({ tenant: A });
    for (let i = 0; i < 3; i++) {
      const { res, html } = await fetchLink(link.json.url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(html).toContain("Open the portal");
    }
    expect((await db.pool.query("SELECT used_at FROM portal_sessions WHERE id = $1", [link.json.id])).rows).toEqual([{ used_at: null }]);
    const opened = await openLink(link.json.url);
    expect(opened).toMatchObject({ status: 303, location: "/" });
    expect(opened.cookie).toContain(`${SESSION_COOKIE}=`);
    // Spent now: the GET says so at once, with no page to post from.
    expect((await fetchLink(link.json.url)).res.headers.get("location")).toBe("/signin?portal=used");
  });

  it("the page's script carries the nonce the proxy put in the request's policy, and nothing else runs", async () => {
    const link = await mint({ tenant: A });
    const u = new URL(link.json.url);
    const withNonce = await open.GET(new Request(`http://localhost${u.pathname}${u.search}`, { headers: { host: "localhost", "x-nonce": "bm9uY2Vfb2ZfdGhlX3Byb3h5" } }));
    const html = await withNonce.text();
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="bm9uY2Vfb2ZfdGhlX3Byb3h5">');
    const odd = await open.GET(new Request(`http://localhost${u.pathname}${u.search}`, { headers: { host: "localhost", "x-nonce": '"><img src=x>' } }));
    expect(await odd.text()).not.toContain("<script");
  });

  it("a POST without a good token in a form body opens nothing", async () => {
    const link = await mint({ tenant: A });
    const token = new URL(link.json.url).searchParams.get("token")!;
    expect(await postToken(null)).toMatchObject({ status: 303, location: "/signin?portal=invalid", cookie: null });
    expect(await postToken("hl_made_up")).toMatchObject({ location: "/signin?portal=invalid", cookie: null });
    expect(await postToken(token, "application/json")).toMatchObject({ location: "/signin?portal=invalid", cookie: null });
    const big = await open.POST(
      new Request("http://localhost/portal/open", {
        method: "POST",
        headers: { host: "localhost", "content-type": "application/x-www-form-urlencoded" },
        body: `token=${token}&pad=${"x".repeat(4096)}`,
      }),
    );
    expect(big.headers.get("location")).toBe("/signin?portal=invalid");
    expect((await db.pool.query("SELECT used_at FROM portal_sessions WHERE id = $1", [link.json.id])).rows).toEqual([{ used_at: null }]);
    expect((await postToken(token)).cookie).toContain(SESSION_COOKIE);
  });

  it("expired, revoked, tampered and made-up links are refused with their reason and no session", async () => {
    const expired = await mint({ tenant: A });
    await db.pool.query("UPDATE portal_sessions SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' WHERE id = $1", [expired.json.id]);
    expect(await openLink(expired.json.url)).toMatchObject({ location: "/signin?portal=expired", cookie: null });

    const revoked = await mint({ tenant: A });
    expect((await call(portalSession.DELETE, { method: "DELETE", token: admin, params: { id: revoked.json.id } })).status).toBe(200);
    expect(await openLink(revoked.json.url)).toMatchObject({ location: "/signin?portal=revoked", cookie: null });

    const good = await mint({ tenant: A });
    const token = new URL(good.json.url).searchParams.get("token")!;
    // One character changed, in the random part and in the tag: the tag fails before any row is read.
    for (const i of [12, token.length - 2]) {
      const c = token[i] === "A" ? "B" : "A";
      const tampered = token.slice(0, i) + c + token.slice(i + 1);
      expect(await openLink(`http://localhost/portal/open?token=${tampered}`)).toMatchObject({ location: "/signin?portal=invalid", cookie: null });
    }
    expect(await openLink("http://localhost/portal/open?token=hl_made_up")).toMatchObject({ location: "/signin?portal=invalid", cookie: null });
    expect(await openLink("http://localhost/portal/open")).toMatchObject({ location: "/signin?portal=invalid", cookie: null });
    // The untampered link still opens (the tampering spent nothing).
    expect((await openLink(good.json.url)).cookie).toContain(SESSION_COOKIE);
  });

  it("the portal sees its tenant's subscriptions and deliveries, not another tenant's", async () => {
    const { cookie } = await openLink((await mint({ tenant: A })).json.url);
    const list = await call(subs.GET, { path: "/api/v1/subscriptions", headers: asBrowser(cookie!) });
    expect(list.status).toBe(200);
    expect(list.json.items.map((s: { id: string }) => s.id).sort()).toEqual([SUB_A1, SUB_A2]);
    expect((await call(sub.GET, { params: { id: SUB_B }, headers: asBrowser(cookie!) })).status).toBe(404);
    const dl = await call(deliveries.GET, { path: "/api/v1/deliveries", headers: asBrowser(cookie!) });
    expect(dl.status).toBe(200);
    const unrouted = await call(lookup.GET, { path: "/api/v1/dashboard/lookup?q=evt_portal_unrouted", headers: asBrowser(cookie!) });
    expect(unrouted.json.unrouted.map((e: { id: string }) => e.id)).toEqual(["evt_portal_unrouted"]);
    expect(dl.json.items.map((d: { subscriptionId: string }) => d.subscriptionId).sort()).toEqual([SUB_A1, SUB_A2]);
  });

  it("with subscriptionId the portal sees that subscription only: the tenant's others are 404 and absent from lists", async () => {
    const link = await mint({ tenant: A, subscriptionId: SUB_A1 });
    const opened = await openLink(link.json.url);
    expect(opened.location).toBe(`/subscriptions/${SUB_A1}`);
    const h = asBrowser(opened.cookie!);
    const list = await call(subs.GET, { path: "/api/v1/subscriptions", headers: h });
    expect(list.json.items.map((s: { id: string }) => s.id)).toEqual([SUB_A1]);
    expect((await call(sub.GET, { params: { id: SUB_A1 }, headers: h })).status).toBe(200);
    expect((await call(sub.GET, { params: { id: SUB_A2 }, headers: h })).status).toBe(404);
    expect((await call(secrets.GET, { params: { id: SUB_A2 }, headers: h })).status).toBe(404);
    const dl = await call(deliveries.GET, { path: "/api/v1/deliveries", headers: h });
    expect(dl.json.items.map((d: { subscriptionId: string }) => d.subscriptionId)).toEqual([SUB_A1]);
    // The lookup box: the other subscription's event (same tenant) is not found, nor is the subscription by name.
    const find = async (q: string) => (await call(lookup.GET, { path: `/api/v1/dashboard/lookup?q=${q}`, headers: h })).json;
    expect(JSON.stringify(await find("evt_portal_a1"))).toContain(SUB_A1);
    expect(await find("evt_portal_a2")).toMatchObject({ deliveries: [], subscriptions: [], unrouted: [] });
    expect((await find("evt_portal_unrouted")).unrouted).toEqual([]);
    expect(JSON.stringify(await find("Lincoln"))).not.toContain(SUB_A2);
    const rotate = await call(secrets.POST, { method: "POST", params: { id: SUB_A2 }, body: { overlapSeconds: 60 }, headers: asBrowser(opened.cookie!, true) });
    expect(rotate.status).toBe(404);
    const create = await call(subs.POST, {
      method: "POST",
      body: { name: "x", url: "https://x.example.test/h", eventTypes: ["assignment.graded"], tenant: A },
      headers: asBrowser(opened.cookie!, true),
    });
    expect(create.status).toBe(403);
  });

  it("with subscriptionId the district's contacts are read masked and left alone: they are the whole district's", async () => {
    const hook = "https://hooks.slack.example/services/T0/B0/district-secret";
    const saved = { emails: ["it@lincoln.example"], webhookUrl: hook };
    const set = await call(contacts.PUT, { method: "PUT", params: { id: A }, token: admin, body: saved });
    expect(set.status, set.text).toBe(200);
    const before = await db.pool.query("SELECT * FROM tenant_contacts WHERE tenant = $1", [A]);
    const opened = await openLink((await mint({ tenant: A, subscriptionId: SUB_A1 })).json.url);
    const h = (mutation = false) => asBrowser(opened.cookie!, mutation);
    const audits = await countRows("audit_entries");
    const read = await call(contacts.GET, { params: { id: A }, headers: h() });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ emails: saved.emails, webhookUrl: "https://hooks.slack.example/…" });
    expect(read.text).not.toContain("district-secret");
    const put = await call(contacts.PUT, { method: "PUT", params: { id: A }, headers: h(true), body: { emails: ["someone@elsewhere.example"] } });
    expect(put.status, put.text).toBe(403);
    expect(put.json.error.message).toContain(`subscription ${SUB_A1} only`);
    expect((await db.pool.query("SELECT * FROM tenant_contacts WHERE tenant = $1", [A])).rows).toEqual(before.rows);
    expect(await countRows("audit_entries")).toBe(audits);
    // A portal for the whole district still sets them.
    const whole = await openLink((await mint({ tenant: A })).json.url);
    const wholeRead = await call(contacts.GET, { params: { id: A }, headers: asBrowser(whole.cookie!) });
    expect(wholeRead.json.webhookUrl).toBe(hook);
    const wholePut = await call(contacts.PUT, { method: "PUT", params: { id: A }, headers: asBrowser(whole.cookie!, true), body: saved });
    expect(wholePut.status, wholePut.text).toBe(200);
  });

  it("with subscriptionId the portal may not add hookledger's operational events, which tell of the tenant's other subscriptions", async () => {
    const opened = await openLink((await mint({ tenant: A, subscriptionId: SUB_A1 })).json.url);
    const patch = (body: Record<string, unknown>, cookie = opened.cookie!) =>
      call(sub.PATCH, { method: "PATCH", params: { id: SUB_A1 }, body, headers: asBrowser(cookie, true) });
    const before = (await db.pool.query("SELECT event_types, updated_at FROM subscriptions WHERE id = $1", [SUB_A1])).rows[0];
    const audits = await countRows("audit_entries");
    const refused = await patch({ eventTypes: ["assignment.graded", "hookledger.delivery.dead_lettered"] });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json.error.details).toEqual([expect.objectContaining({ path: "body.eventTypes" })]);
    expect((await db.pool.query("SELECT event_types, updated_at FROM subscriptions WHERE id = $1", [SUB_A1])).rows[0]).toEqual(before);
    expect(await countRows("audit_entries")).toBe(audits);
    // Its own types it still changes; a portal for the whole district adds the operational ones.
    expect((await patch({ eventTypes: ["assignment.graded", "attendance.recorded"] })).status).toBe(200);
    const whole = await openLink((await mint({ tenant: A })).json.url);
    const added = await patch({ eventTypes: ["assignment.graded", "hookledger.delivery.dead_lettered"] }, whole.cookie!);
    expect(added.status, added.text).toBe(200);
    // Once there, the one-subscription portal's other edits go through.
    expect((await patch({ name: "Lincoln SIS", eventTypes: ["assignment.graded", "hookledger.delivery.dead_lettered"] })).status).toBe(200);
    expect((await patch({ eventTypes: ["assignment.graded"] })).status).toBe(200);
  });

  it("a read-only link is a support agent: it reads, it may not pause or rotate", async () => {
    const { cookie } = await openLink((await mint({ tenant: A, readOnly: true })).json.url);
    expect((await principalFromSessionCookie(parseCookies(cookie!)[SESSION_COOKIE]))?.role).toBe("support");
    expect((await call(sub.GET, { params: { id: SUB_A1 }, headers: asBrowser(cookie!) })).status).toBe(200);
    const rotate = await call(secrets.POST, { method: "POST", params: { id: SUB_A1 }, body: {}, headers: asBrowser(cookie!, true) });
    expect(rotate.status).toBe(403);
  });
});

describe("opening a link in a browser that is signed in", () => {
  /** The link's page as a browser with `cookie` gets it (the proxy's nonce included, so the script would be there). */
  async function pageWith(url: string, cookie: string) {
    const u = new URL(url);
    const res = await open.GET(new Request(`http://localhost${u.pathname}${u.search}`, { headers: { host: "localhost", cookie, "x-nonce": "bm9uY2U=" } }));
    return { res, html: await res.text() };
  }

  /** The form POSTed with `cookie`, optionally with the interstitial's replace=1. */
  async function postWith(token: string, cookie: string, replace?: string) {
    const res = await open.POST(
      new Request("http://localhost/portal/open", {
        method: "POST",
        headers: { host: "localhost", "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams(replace === undefined ? { token } : { token, replace }).toString(),
      }),
    );
    const setCookies = res.headers.getSetCookie();
    const kept = setCookies.filter((c) => !c.includes("Max-Age=0"));
    return { res, status: res.status, location: res.headers.get("location"), cookie: kept.length ? kept.map((c) => c.split(";")[0]).join("; ") : null };
  }

  const usedAt = async (id: string) => (await db.pool.query("SELECT used_at FROM portal_sessions WHERE id = $1", [id])).rows[0].used_at;

  it("a signed-in user's GET names the user and waits for a click: no script, nothing spent", async () => {
    const u = await createUser(db.prisma, { email: "alice@portal.example", role: "admin" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    const link = await mint({ tenant: A });
    const { res, html } = await pageWith(link.json.url, person);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(html).not.toContain("<script");
    expect(html).toContain("You are signed in to hookledger as <strong>alice@portal.example</strong> (admin).");
    expect(html).toContain("the district portal of <strong>Lincoln USD</strong>, and signs you out of hookledger, as signing out does: in every browser.");
    expect(html).toContain("private window");
    expect(html).toContain('<button type="submit">Sign out and open the portal</button>');
    expect(html).toContain('<input type="hidden" name="replace" value="1">');
    expect(html).toContain('<a class="back" href="/">Back to the dashboard</a>');
    expect(await usedAt(link.json.id)).toBeNull();
  });

  it("without a session, or with an ended one, the page opens the link at once as before", async () => {
    const link = await mint({ tenant: A });
    const { html } = await pageWith(link.json.url, "");
    expect(html).toContain('<script nonce="bm9uY2U=">document.getElementById("open").submit()</script>');
    expect(html).toContain("Open the portal");
    expect(html).not.toContain('name="replace"');
    const u = await createUser(db.prisma, { email: "gone@portal.example", role: "admin" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    await db.pool.query("UPDATE users SET session_version = session_version + 1 WHERE id = $1", [u.id]);
    expect((await pageWith(link.json.url, person)).html).toContain("<script nonce=");
    expect((await pageWith(link.json.url, `${SESSION_COOKIE}=not-a-seal`)).html).toContain("<script nonce=");
  });

  it("a user's POST without replace=1 spends nothing and answers the same page; with it, the portal replaces the session", async () => {
    const u = await createUser(db.prisma, { email: "bob@portal.example", role: "manager", tenantId: A });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    const link = await mint({ tenant: A });
    const token = new URL(link.json.url).searchParams.get("token")!;
    for (const replace of [undefined, "", "0", "yes"]) {
      const refused = await postWith(token, person, replace);
      expect(refused.status, replace).toBe(200);
      expect(refused.cookie).toBeNull();
      const html = await refused.res.text();
      expect(html).toContain("You are signed in to hookledger as <strong>bob@portal.example</strong> (manager).");
      expect(html).not.toContain("<script");
    }
    expect(await usedAt(link.json.id)).toBeNull();
    // The person's session is untouched.
    expect(await principalFromSessionCookie(parseCookies(person)[SESSION_COOKIE])).toMatchObject({ kind: "user", email: "bob@portal.example" });

    const opened = await postWith(token, person, "1");
    expect(opened).toMatchObject({ status: 303, location: "/" });
    expect(await principalFromSessionCookie(parseCookies(opened.cookie!)[SESSION_COOKIE])).toMatchObject({ kind: "portal", tenantId: A });
    expect(await usedAt(link.json.id)).not.toBeNull();
    // A spent or bad link still says why, with or without a session, before any page.
    expect(await postWith(token, person)).toMatchObject({ status: 303, location: "/signin?portal=used", cookie: null });
    expect(await postWith("hl_made_up", person)).toMatchObject({ status: 303, location: "/signin?portal=invalid", cookie: null });
  });

  it("another district's or subscription's portal is named; the same portal's browser opens the link at once", async () => {
    const { cookie: lincoln } = await openLink((await mint({ tenant: A })).json.url);
    const other = await mint({ tenant: B });
    const { html } = await pageWith(other.json.url, lincoln!);
    expect(html).not.toContain("<script");
    expect(html).toContain("This browser has the portal of <strong>Lincoln USD</strong> open.");
    expect(html).toContain("This link opens the portal of <strong>Jefferson County</strong>");
    expect(html).toContain('<a class="back" href="/">Back to the portal of Lincoln USD</a>');
    const otherToken = new URL(other.json.url).searchParams.get("token")!;
    expect(await postWith(otherToken, lincoln!)).toMatchObject({ status: 200, cookie: null });
    expect(await usedAt(other.json.id)).toBeNull();

    // One subscription of the same district is another scope, named as such.
    const oneSub = await mint({ tenant: A, subscriptionId: SUB_A1 });
    expect((await pageWith(oneSub.json.url, lincoln!)).html).toContain(
      "This link opens the portal of <strong>Lincoln USD</strong> (its subscription <strong>Lincoln SIS</strong> only)",
    );
    // The same district's whole portal again: nothing to lose, the page opens it.
    const same = await mint({ tenant: A });
    expect((await pageWith(same.json.url, lincoln!)).html).toContain("<script nonce=");
    const reopened = await postWith(new URL(same.json.url).searchParams.get("token")!, lincoln!);
    expect(reopened).toMatchObject({ status: 303, location: "/" });
    expect(reopened.cookie).toContain(SESSION_COOKIE);
  });

  it("prints the names it shows escaped", async () => {
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('evil', $1)", [`<img src=x onerror=alert(1)> & "Co"`]);
    const u = await createUser(db.prisma, { email: "o'neil@portal.example", role: "admin" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    const { html } = await pageWith((await mint({ tenant: "evil" })).json.url, person);
    expect(html).toContain("<strong>o&#39;neil@portal.example</strong>");
    expect(html).toContain("<strong>&lt;img src=x onerror=alert(1)&gt; &amp; &quot;Co&quot;</strong>");
    expect(html).not.toContain("<img");
  });
});

describe("what a portal session may do", () => {
  it("its actions are audited as portal:<tenant>; a mutation without the CSRF token is refused", async () => {
    const { cookie } = await openLink((await mint({ tenant: A })).json.url);
    const noCsrf = await call(sub.PATCH, { method: "PATCH", params: { id: SUB_A2 }, body: { state: "paused", reason: "x" }, headers: asBrowser(cookie!) });
    expect(noCsrf.status).toBe(403);
    const pause = await call(sub.PATCH, {
      method: "PATCH",
      params: { id: SUB_A2 },
      body: { state: "paused", reason: "district maintenance" },
      headers: asBrowser(cookie!, true),
    });
    expect(pause.status, pause.text).toBe(200);
    const rotate = await call(secrets.POST, { method: "POST", params: { id: SUB_A2 }, body: { overlapSeconds: 3600 }, headers: asBrowser(cookie!, true) });
    expect(rotate.status, rotate.text).toBe(201);
    const rows = (
      await db.pool.query(
        "SELECT action, actor, tenant_id FROM audit_entries WHERE target_id = $1 AND action IN ('subscription.pause', 'subscription.secret.rotate') ORDER BY id",
        [SUB_A2],
      )
    ).rows;
    expect(rows).toEqual([
      { action: "subscription.pause", actor: `portal:${A}`, tenant_id: A },
      { action: "subscription.secret.rotate", actor: `portal:${A}`, tenant_id: A },
    ]);
  });

  it("never reaches users, tokens, tenants, retention or erasures", async () => {
    const { cookie } = await openLink((await mint({ tenant: A })).json.url);
    const p = (await principalFromSessionCookie(parseCookies(cookie!)[SESSION_COOKIE]))!;
    for (const perm of GLOBAL_ONLY_PERMISSIONS) expect(canAs(p, perm), perm).toBe(false);
    expect((await call(tenants.GET, { headers: asBrowser(cookie!) })).status).toBe(403);
    expect((await call(tenants.POST, { method: "POST", body: { id: "x", name: "X" }, headers: asBrowser(cookie!, true) })).status).toBe(403);
    expect((await call(retention.GET, { headers: asBrowser(cookie!) })).status).toBe(403);
    expect((await call(erasures.POST, { method: "POST", body: { subject: { studentId: "s" }, reason: "x" }, headers: asBrowser(cookie!, true) })).status).toBe(403);
    // Nor can it mint links into itself.
    expect((await call(portalSessions.POST, { method: "POST", body: { tenant: A }, headers: asBrowser(cookie!, true) })).status).toBe(403);
  });

  it("revoking the link ends the session opened from it; the session also ends at expiresAt", async () => {
    const link = await mint({ tenant: A });
    const { cookie } = await openLink(link.json.url);
    const h = asBrowser(cookie!);
    expect((await call(subs.GET, { headers: h })).status).toBe(200);
    const r = await call(portalSession.DELETE, { method: "DELETE", token: portalToken, params: { id: link.json.id } });
    expect(r.status).toBe(200);
    expect(r.json.id).toBe(link.json.id);
    expect((await call(subs.GET, { headers: h })).status).toBe(401);
    const audit = (await db.pool.query("SELECT actor, tenant_id FROM audit_entries WHERE action = 'portal.session.revoke' AND target_id = $1", [link.json.id])).rows;
    expect(audit).toEqual([{ actor: "token:test-portal", tenant_id: A }]);
    // Again: the same answer, no second row; an unknown id is 404.
    expect((await call(portalSession.DELETE, { method: "DELETE", token: admin, params: { id: link.json.id } })).status).toBe(200);
    expect(
      (await db.pool.query("SELECT count(*)::int AS n FROM audit_entries WHERE action = 'portal.session.revoke' AND target_id = $1", [link.json.id])).rows[0].n,
    ).toBe(1);
    expect((await call(portalSession.DELETE, { method: "DELETE", token: admin, params: { id: "ps_0000000000000000" } })).status).toBe(404);

    const later = await mint({ tenant: A });
    const opened = await openLink(later.json.url);
    expect((await call(subs.GET, { headers: asBrowser(opened.cookie!) })).status).toBe(200);
    await db.pool.query("UPDATE portal_sessions SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' WHERE id = $1", [later.json.id]);
    expect((await call(subs.GET, { headers: asBrowser(opened.cookie!) })).status).toBe(401);
  });

  it("an ended session's page is told so in its viewer's words, with where to go; a caller with no session, how to sign in", async () => {
    const link = await mint({ tenant: A });
    const { cookie } = await openLink(link.json.url);
    expect((await call(portalSession.DELETE, { method: "DELETE", token: portalToken, params: { id: link.json.id } })).status).toBe(200);
    const ended = await call(subs.GET, { headers: asBrowser(cookie!) });
    expect(ended.status).toBe(401);
    expect(ended.json.error).toEqual({
      code: "unauthorized",
      message: "Your district portal session has ended; ask the service that gave the link to you for a new one.",
      details: { signIn: "/signin?portal=ended" },
    });
    // A person signed out in another tab: the password form, not a portal's line.
    const u = await createUser(db.prisma, { email: "ended@portal.example", role: "manager" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    expect((await call(subs.GET, { headers: { cookie: person } })).status).toBe(200);
    await db.pool.query("UPDATE users SET session_version = session_version + 1 WHERE id = $1", [u.id]);
    const signedOut = await call(subs.GET, { headers: { cookie: person } });
    expect(signedOut.json.error).toMatchObject({ message: "Your session has ended; sign in again.", details: { signIn: "/signin" } });
    // No cookie and no token (a script): how to authenticate; a bad bearer token is not rescued by a cookie's words.
    expect((await call(subs.GET, {})).json.error.message).toMatch(/^Missing or invalid credentials/);
    expect((await call(subs.GET, { headers: { ...asBrowser(cookie!), authorization: "Bearer hl_nope" } })).json.error.details).toBeNull();
  });
});

describe("signing out of the portal", () => {
  it("ends the session for good (revoked, audited as the portal) and clears the cookies", async () => {
    const { handleSignOut } = await import("../../lib/auth/signin");
    const link = await mint({ tenant: A });
    const { cookie } = await openLink(link.json.url);
    const res = await handleSignOut(new Request("http://localhost/api/auth/signout", { method: "POST", headers: asBrowser(cookie!, true) }));
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().every((c) => c.includes("Max-Age=0"))).toBe(true);
    expect((await call(subs.GET, { headers: asBrowser(cookie!) })).status).toBe(401);
    const audit = (await db.pool.query("SELECT actor FROM audit_entries WHERE action = 'portal.session.revoke' AND target_id = $1", [link.json.id])).rows;
    expect(audit).toEqual([{ actor: `portal:${A}` }]);
  });
});

describe("a browser holds one session at a time: the one it replaces ends in the database", () => {
  /** The form POSTed with `cookie` and the interstitial's replace=1; the cookie header the browser then sends. */
  async function replaceWith(url: string, cookie: string) {
    const token = new URL(url).searchParams.get("token")!;
    const res = await open.POST(
      new Request("http://localhost/portal/open", {
        method: "POST",
        headers: { host: "localhost", "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ token, replace: "1" }).toString(),
      }),
    );
    expect(res.status).toBe(303);
    const kept = res.headers.getSetCookie().filter((c) => !c.includes("Max-Age=0"));
    return kept.map((c) => c.split(";")[0]).join("; ");
  }
  const revoked = async (id: string) => (await db.pool.query("SELECT revoked_at IS NOT NULL AS revoked, revoked_by FROM portal_sessions WHERE id = $1", [id])).rows[0];
  const revokeAudit = async (id: string) =>
    (await db.pool.query("SELECT actor, tenant_id, details FROM audit_entries WHERE action = 'portal.session.revoke' AND target_id = $1", [id])).rows;
  let ip = 0;
  async function signInOver(cookie: string, email: string, password: string) {
    const { handleSignIn } = await import("../../lib/auth/signin");
    const { PEER_HEADER, trustPeerHeader } = await import("../../lib/auth/proxies");
    trustPeerHeader();
    return call(handleSignIn, {
      path: "/api/auth/signin",
      body: { email, password },
      headers: { origin: "http://localhost", host: "localhost", "sec-fetch-site": "same-origin", cookie, [PEER_HEADER]: `198.51.100.${++ip}` },
    });
  }

  it("opening a link over a person's session signs that person out as signing out does: a copy of the cookie is refused", async () => {
    const u = await createUser(db.prisma, { email: "copied@portal.example", role: "admin" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    expect((await call(subs.GET, { headers: { cookie: person } })).status).toBe(200);
    const portal = await replaceWith((await mint({ tenant: A })).json.url, person);
    expect((await call(subs.GET, { headers: asBrowser(portal) })).status).toBe(200);
    // Another tab's copy of the person's cookie (or a stolen one) no longer works.
    expect((await call(subs.GET, { headers: { cookie: person } })).status).toBe(401);
  });

  it("opening a link over another portal, or the same one again, revokes the one it replaces, audited in that portal's district", async () => {
    const lincoln = await mint({ tenant: A });
    const { cookie } = await openLink(lincoln.json.url);
    const jefferson = await replaceWith((await mint({ tenant: B })).json.url, cookie!);
    expect((await call(subs.GET, { headers: asBrowser(jefferson) })).status).toBe(200);
    expect((await call(subs.GET, { headers: asBrowser(cookie!) })).status).toBe(401);
    expect(await revoked(lincoln.json.id)).toEqual({ revoked: true, revoked_by: `portal:${A}` });
    // The district's own trail, in its own name: never the name of the portal that came next.
    expect(await revokeAudit(lincoln.json.id)).toEqual([{ actor: `portal:${A}`, tenant_id: A, details: { tenant: A, subscriptionId: null, replacedBy: "portal" } }]);

    // The same district's portal opened again at once (no page asks): the earlier session still ends.
    const earlier = await mint({ tenant: A });
    const first = await openLink(earlier.json.url);
    const again = await postTokenWith(new URL((await mint({ tenant: A })).json.url).searchParams.get("token")!, first.cookie!);
    expect(again).toMatchObject({ status: 303, location: "/" });
    expect((await call(subs.GET, { headers: asBrowser(first.cookie!) })).status).toBe(401);
    expect(await revoked(earlier.json.id)).toMatchObject({ revoked: true });
  });

  it("a link that does not open ends nothing", async () => {
    const live = await mint({ tenant: A });
    const { cookie } = await openLink(live.json.url);
    const spent = await mint({ tenant: B });
    await openLink(spent.json.url);
    expect(await postTokenWith(new URL(spent.json.url).searchParams.get("token")!, cookie!, "1")).toMatchObject({ location: "/signin?portal=used" });
    expect((await call(subs.GET, { headers: asBrowser(cookie!) })).status).toBe(200);
    expect(await revoked(live.json.id)).toMatchObject({ revoked: false });
  });

  it("a person signing in over a portal revokes it; over another person's session ends theirs; over their own keeps it", async () => {
    await createUser(db.prisma, { email: "over@portal.example", role: "manager", password: "correct horse battery" });
    const link = await mint({ tenant: A });
    const { cookie } = await openLink(link.json.url);
    const signedIn = await signInOver(cookie!, "over@portal.example", "correct horse battery");
    expect(signedIn.status, signedIn.text).toBe(200);
    expect((await call(subs.GET, { headers: asBrowser(cookie!) })).status).toBe(401);
    expect(await revokeAudit(link.json.id)).toEqual([{ actor: `portal:${A}`, tenant_id: A, details: { tenant: A, subscriptionId: null, replacedBy: "sign-in" } }]);

    const mine = signedIn.headers
      .getSetCookie()
      .filter((c) => !c.includes("Max-Age=0"))
      .map((c) => c.split(";")[0])
      .join("; ");
    await createUser(db.prisma, { email: "next@portal.example", role: "support", password: "correct horse battery" });
    // The same person again: their session was not someone else's, and stays.
    expect((await signInOver(mine, "over@portal.example", "correct horse battery")).status).toBe(200);
    expect((await call(subs.GET, { headers: { cookie: mine } })).status).toBe(200);
    // Someone else at the same browser: the first person's session ends, as their sign-out would end it.
    expect((await signInOver(mine, "next@portal.example", "correct horse battery")).status).toBe(200);
    expect((await call(subs.GET, { headers: { cookie: mine } })).status).toBe(401);
  });

  it("a failed sign-in ends nothing", async () => {
    const link = await mint({ tenant: A });
    const { cookie } = await openLink(link.json.url);
    expect((await signInOver(cookie!, "over@portal.example", "not the password")).status).toBe(401);
    expect((await call(subs.GET, { headers: asBrowser(cookie!) })).status).toBe(200);
  });

  it("a link for the same portal at another access level is another portal: the page asks, naming both levels", async () => {
    const { cookie } = await openLink((await mint({ tenant: A })).json.url);
    const readOnly = await mint({ tenant: A, readOnly: true });
    const u = new URL(readOnly.json.url);
    const res = await open.GET(new Request(`http://localhost${u.pathname}${u.search}`, { headers: { host: "localhost", cookie: cookie!, "x-nonce": "bm9uY2U=" } }));
    const html = await res.text();
    expect(html).not.toContain("<script");
    expect(html).toContain("This browser has the portal of <strong>Lincoln USD</strong> open, with changes allowed.");
    expect(html).toContain("This link opens it read-only, and signs the open one out.");
    const token = u.searchParams.get("token")!;
    expect(await postTokenWith(token, cookie!)).toMatchObject({ status: 200 });
    expect((await db.pool.query("SELECT used_at FROM portal_sessions WHERE id = $1", [readOnly.json.id])).rows[0].used_at).toBeNull();
    // Still the manager-capable session, not silently made read-only.
    expect(await principalFromSessionCookie(parseCookies(cookie!)[SESSION_COOKIE])).toMatchObject({ kind: "portal", role: "manager" });
    const { cookie: ro } = await openLink((await mint({ tenant: A, readOnly: true })).json.url);
    const back = new URL((await mint({ tenant: A })).json.url);
    const res2 = await open.GET(new Request(`http://localhost${back.pathname}${back.search}`, { headers: { host: "localhost", cookie: ro! } }));
    const html2 = await res2.text();
    expect(html2).toContain("open, read-only.");
    expect(html2).toContain("This link opens it with changes allowed");
  });
});

/** The link's form POSTed by a browser sending `cookie`, optionally with replace. */
async function postTokenWith(token: string, cookie: string, replace?: string) {
  const res = await open.POST(
    new Request("http://localhost/portal/open", {
      method: "POST",
      headers: { host: "localhost", "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(replace === undefined ? { token } : { token, replace }).toString(),
    }),
  );
  return { status: res.status, location: res.headers.get("location") };
}

describe("two session cookies in one browser", () => {
  const csrfOf = (cookie: string) => parseCookies(cookie).hl_csrf;
  it("the proxy, the API and the portal link's page all read a pair as no session, and the proxy clears both forms", async () => {
    const u = await createUser(db.prisma, { email: "pair@portal.example", role: "admin" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    const { cookie: portal } = await openLink((await mint({ tenant: A })).json.url);
    for (const pair of [`${person}; ${portal}`, `${portal}; ${person}`]) {
      expect(csrfOf(pair)).toBeTruthy();
      // The API: neither the first nor the last cookie decides.
      expect((await call(subs.GET, { headers: { cookie: pair, host: "localhost" } })).status).toBe(401);
      // The proxy: a page is sent to sign in, and both forms of the cookies are removed.
      const res = await proxy(new NextRequest("http://localhost:3000/subscriptions", { headers: { cookie: pair } }));
      expect(res.status).toBe(307);
      expect(new URL(res.headers.get("location")!).pathname).toBe("/signin");
      const cleared = res.headers.getSetCookie();
      expect(cleared.filter((c) => c.startsWith(`${SESSION_COOKIE}=; `) && c.includes("Max-Age=0"))).toHaveLength(2);
      expect(cleared.some((c) => c.startsWith(`${SESSION_COOKIE}=; `) && c.includes("Partitioned"))).toBe(true);
      // The link's page does not ask on behalf of either: there is no one signed in to name.
      const link = new URL((await mint({ tenant: B })).json.url);
      const page = await open.GET(new Request(`http://localhost${link.pathname}${link.search}`, { headers: { host: "localhost", cookie: pair, "x-nonce": "bm9uY2U=" } }));
      expect(await page.text()).toContain("<script nonce=");
    }
    // One cookie, sent twice with the same value, is still that one session.
    expect((await call(subs.GET, { headers: { cookie: `${portal}; ${portal}`, host: "localhost" } })).status).toBe(200);
  });
});

describe("framing", () => {
  async function page(path: string, cookie?: string) {
    const res = await proxy(new NextRequest(`http://localhost:3000${path}`, { headers: cookie ? { cookie } : {} }));
    const csp = res.headers.get("content-security-policy") ?? "";
    // No X-Frame-Options: DENY beside a frame-ancestors that lets a site frame the page; DENY wherever none may.
    expect(res.headers.get("x-frame-options"), path).toBe(csp.includes("frame-ancestors 'none'") ? "DENY" : null);
    return csp;
  }

  it("a portal page may be framed by the configured origins; a person's page and the sign-in form never", async () => {
    process.env[FRAMES] = "https://app.example.com  http://localhost:3199";
    const { cookie } = await openLink((await mint({ tenant: A })).json.url);
    const u = await createUser(db.prisma, { email: "manager@portal.example", role: "manager" });
    const person = (await sessionSetCookies(newSession(u.id), false)).map((c) => c.split(";")[0]).join("; ");
    expect(await page("/subscriptions", cookie!)).toContain("frame-ancestors 'self' https://app.example.com http://localhost:3199");
    expect(await page("/portal/open?token=x")).toContain("frame-ancestors 'self' https://app.example.com http://localhost:3199");
    expect(await page("/signin?portal=used")).toContain("frame-ancestors 'self' https://app.example.com");
    expect(await page("/subscriptions", person)).toContain("frame-ancestors 'none'");
    expect(await page("/signin")).toContain("frame-ancestors 'none'");
    delete process.env[FRAMES];
    expect(await page("/subscriptions", cookie!)).toContain("frame-ancestors 'none'");
  });

  it("the portal cookie is SameSite=None; Secure; Partitioned only when framing is configured, else Lax", async () => {
    const lax = await openLink((await mint({ tenant: A })).json.url);
    // A partitioned pair left from when framing was configured is removed first; the cookies set are Lax.
    const [clearedFramed, setLax] = [lax.setCookies.slice(0, 2), lax.setCookies.slice(2)];
    for (const c of clearedFramed) expect(c).toMatch(/^hl_(session|csrf)=; Path=\/; Max-Age=0; SameSite=None; Secure; Partitioned/);
    expect(setLax).toHaveLength(2);
    for (const c of setLax) {
      expect(c).toContain("SameSite=Lax");
      expect(c).not.toContain("SameSite=None");
    }
    expect(lax.setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))).toContain("HttpOnly");
    process.env[FRAMES] = "https://app.example.com";
    const framed = await openLink((await mint({ tenant: A })).json.url);
    // The unpartitioned cookies of a session the browser had (a person's) are removed: partitioned ones sit beside them.
    const [cleared, set] = [framed.setCookies.slice(0, 2), framed.setCookies.slice(2)];
    for (const c of cleared) expect(c).toMatch(/^hl_(session|csrf)=; Path=\/; Max-Age=0; SameSite=Lax/);
    expect(set).toHaveLength(2);
    for (const c of set) expect(c).toMatch(/SameSite=None; Secure; Partitioned/);
  });

  it("signing in and signing out remove a framed portal's partitioned cookies too, which a person's cookie would only sit beside", async () => {
    const { handleSignIn, handleSignOut } = await import("../../lib/auth/signin");
    const { PEER_HEADER, trustPeerHeader } = await import("../../lib/auth/proxies");
    trustPeerHeader();
    process.env[FRAMES] = "https://app.example.com";
    await createUser(db.prisma, { email: "framed@portal.example", role: "support", password: "correct horse battery" });
    const res = await call(handleSignIn, {
      path: "/api/auth/signin",
      body: { email: "framed@portal.example", password: "correct horse battery" },
      headers: { origin: "http://localhost", host: "localhost", "sec-fetch-site": "same-origin", [PEER_HEADER]: "203.0.113.77" },
    });
    expect(res.status, res.text).toBe(200);
    const set = res.headers.getSetCookie();
    for (const name of ["hl_session", "hl_csrf"]) {
      const i = set.findIndex((c) => c.startsWith(`${name}=; `) && c.includes("Partitioned") && c.includes("Max-Age=0"));
      // Removed before the person's own is set: a browser without partitioned cookies reads the removal as of the same cookie.
      expect(i, name).toBeGreaterThanOrEqual(0);
      expect(i).toBeLessThan(set.findIndex((c) => c.startsWith(`${name}=`) && !c.includes("Max-Age=0")));
    }
    const kept = set
      .filter((c) => !c.includes("Max-Age=0"))
      .map((c) => c.split(";")[0])
      .join("; ");
    const out = await call(handleSignOut, { method: "POST", headers: { ...asBrowser(kept, true) } });
    expect(out.status).toBe(200);
    const cleared = out.headers.getSetCookie();
    expect(cleared.filter((c) => c.startsWith(`${SESSION_COOKIE}=; `))).toHaveLength(2);
    expect(cleared.some((c) => c.startsWith(`${SESSION_COOKIE}=; `) && c.includes("Partitioned"))).toBe(true);
    expect(cleared.some((c) => c.startsWith(`${SESSION_COOKIE}=; `) && !c.includes("Partitioned"))).toBe(true);
  });

  it("refuses junk origins, naming the entry", () => {
    expect(parseFrameAncestors("https://a.example https://*.b.example http://localhost:3199")).toEqual([
      "https://a.example",
      "https://*.b.example",
      "http://localhost:3199",
    ]);
    expect(parseFrameAncestors(undefined)).toEqual([]);
    for (const junk of ["a.example", "https://a.example/path", "javascript:alert(1)", "https://a.example;script-src", "*", "'self'", "ftp://a.example"])
      expect(() => parseFrameAncestors(junk), junk).toThrow(new RegExp(`HOOKLEDGER_PORTAL_FRAME_ANCESTORS`));
  });
});

describe("the portal role", () => {
  it("is for global API tokens only: no user gets it, and a token confined to a tenant is refused", async () => {
    const { createTokenAsAdmin } = await import("../../lib/auth/admin");
    await expect(createUser(db.prisma, { email: "portal@portal.example", role: "portal" as never })).rejects.toThrow(/role must be one of/);
    await expect(createTokenAsAdmin(db.prisma, { role: "portal", tenantId: A }, SYSTEM)).rejects.toThrow(/portal token is global/);
    const t = await createTokenAsAdmin(db.prisma, { role: "portal", name: "saas-backend" }, SYSTEM);
    expect(t.role).toBe("portal");
    // It mints links and does nothing else.
    expect((await call(subs.GET, { token: t.token })).status).toBe(403);
    expect((await call(deliveries.GET, { token: t.token })).status).toBe(403);
  });
});
