// The district's own door: the SaaS's backend (a `portal` token, made with the CLI) mints a portal link; a browser
// with no account opens it (after the district's mail system has fetched it, as link scanners do: a GET spends
// nothing; without scripts a button opens it) and is the district: its name in the header, the portal marker, its endpoint and
// deliveries, no Admin or Alerts; it rotates its own signing secret and sends its own dead letter again (each audited
// as portal:<tenant>). The spent link,
// opened again, is the sign-in page's one line. A page this spec serves on another port frames a second link and
// shows the portal inside the frame (HOOKLEDGER_PORTAL_FRAME_ANCESTORS in playwright.config.ts). Screens at 1,280
// and 390 px. An admin who opens a link in the browser they are signed in to is asked first, and so is a browser
// that has another portal open, or the same portal at another access level. The session a browser replaces ends for
// good: another browser's copy of a person's cookie is signed out, and a person signing in over a (partitioned) portal
// cookie leaves one session cookie and the portal's session revoked.
import http from "node:http";
import { expect, test, type APIRequestContext, type Browser } from "@playwright/test";
import { api, cli, csrfHeader, signIn, signInWith } from "./helpers";
import { closeE2eDb, e2eDb, settleDelivery, shot } from "./dashboard-seed";
import { E2E_FRAMER_PORT } from "../playwright.config";

const run = Date.now().toString(36);
const D = { id: `portal_${run}`, name: `Roosevelt USD ${run}`, sub: `sub_portal_${run}`, subName: `Roosevelt SIS ${run}`, evt: `evt_portal_${run}` };
/** The district's second endpoint: a link for the first one must not show it. */
const OTHER = { sub: `sub_portal2_${run}`, subName: `Roosevelt LMS ${run}` };
/** The SaaS's own site: its receiver for the district's endpoint and the page that frames the portal. */
const FRAMER_PORT = E2E_FRAMER_PORT;

let framer: http.Server;
/** What the SaaS's receiver was sent, for the district's endpoints that point at it. */
const received: { path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
let portalToken = "";

test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  framer = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://localhost:${FRAMER_PORT}`);
    if (url.pathname === "/frame") {
      res.setHeader("content-type", "text/html; charset=utf-8");
      const src = (url.searchParams.get("src") ?? "").replace(/"/g, "&quot;");
      res.end(
        `<!doctype html><title>Edtech app</title><h1>Edtech app: district settings</h1><iframe src="${src}" title="District portal" style="width:1200px;height:800px;border:1px solid #999"></iframe>`,
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: url.pathname, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => framer.listen(FRAMER_PORT, r));
  await cli(["tenant", "create", "--id", D.id, "--name", D.name]);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: D.sub,
    name: D.subName,
    url: `http://127.0.0.1:${FRAMER_PORT}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: D.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  const other = await api(request, "POST", "/api/v1/subscriptions", {
    id: OTHER.sub,
    name: OTHER.subName,
    url: `http://127.0.0.1:${FRAMER_PORT}/lms`,
    eventTypes: ["assignment.graded"],
    tenant: D.id,
  });
  expect(other.status, JSON.stringify(other.json)).toBe(201);
  const published = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: D.evt, type: "assignment.graded", data: { score: 91 }, subject: { tenant: D.id, studentId: `stu_${run}` } },
    "producer",
  );
  expect(published.status, JSON.stringify(published.json)).toBe(202);
  portalToken = (await cli(["token", "create", "--role", "portal", "--name", `e2e-portal-${run}`])).trim().split("\n").pop()!;
});

test.afterAll(async () => {
  await new Promise((r) => framer?.close(r));
  await closeE2eDb();
});

async function mintLink(request: APIRequestContext, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await request.post("/api/v1/portal/sessions", {
    headers: { authorization: `Bearer ${portalToken}`, "content-type": "application/json" },
    data: JSON.stringify({ tenant: D.id, expiresInSeconds: 7200, ...extra }),
  });
  const body = await res.json();
  expect(res.status(), JSON.stringify(body)).toBe(201);
  expect(body.url).toMatch(/\/portal\/open\?token=/);
  return body.url;
}

/** A browser with nothing of anyone's: no cookie, no account. */
async function freshPage(browser: Browser, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, permissions: ["clipboard-read", "clipboard-write"] });
  return { context, page: await context.newPage() };
}

test("a district opens its portal link, sees its own endpoint and deliveries, rotates its secret; the spent link says so", async ({ browser, request }) => {
  const url = await mintLink(request);
  // The district's mail system fetches the link first, as link scanners do: that spends nothing.
  const scanned = await request.get(url, { maxRedirects: 0 });
  expect(scanned.status()).toBe(200);
  expect(await scanned.text()).toContain("Open the portal");
  // Frameable by the SaaS (playwright.config.ts sets HOOKLEDGER_PORTAL_FRAME_ANCESTORS): no X-Frame-Options beside it,
  // where the sign-in form, which no site may frame, says DENY.
  expect(scanned.headers()["content-security-policy"]).toContain(`frame-ancestors 'self' http://localhost:${FRAMER_PORT}`);
  expect(scanned.headers()["x-frame-options"]).toBeUndefined();
  expect((await request.get("/signin")).headers()["x-frame-options"]).toBe("DENY");
  const { context, page } = await freshPage(browser);
  await page.goto(url);
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId("viewer-tenant")).toHaveText(D.name);
  await expect(page.getByTestId("portal-marker")).toContainText(/District portal · ends at \d\d:\d\d (UTC|GMT[+-]\d+|[A-Z]{2,5})/);
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Subscriptions" })).toBeVisible();
  for (const hidden of ["Admin", "Alerts", "Redrives"]) await expect(nav.getByRole("link", { name: hidden })).toHaveCount(0);
  await shot(page, "portal-home-1280");

  await nav.getByRole("link", { name: "Subscriptions" }).click();
  await expect(page.getByRole("link", { name: D.subName })).toBeVisible();
  await expect(page.getByRole("link", { name: OTHER.subName })).toBeVisible();
  await page.getByRole("link", { name: D.subName }).click();
  await expect(page).toHaveURL(new RegExp(`/subscriptions/${D.sub}`));
  await expect(page.getByText(D.evt).first()).toBeVisible();

  await page.getByRole("button", { name: "Rotate signing secret…" }).click();
  await page.getByRole("form", { name: "Rotate signing secret" }).getByRole("button", { name: "Rotate now" }).click();
  await expect(page.getByTestId("secret-once")).toContainText("whsec_");
  await expect(page.getByTestId("secrets-list").getByRole("listitem")).toHaveCount(2);
  await shot(page, "portal-subscription-1280");
  const audit = await e2eDb().query("SELECT actor FROM audit_entries WHERE action = 'subscription.secret.rotate' AND target_id = $1", [D.sub]);
  expect(audit.rows).toEqual([{ actor: `portal:${D.id}` }]);

  // The phone: the header keeps the district's name and the marker, nothing runs off the side.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("portal-marker")).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-subscription-390");
  await context.close();

  // The link is spent: another browser gets the reason, and no session.
  const again = await freshPage(browser, 390);
  await again.page.goto(url);
  await expect(again.page).toHaveURL(/\/signin\?portal=used$/);
  await expect(again.page.getByTestId("portal-notice")).toHaveText(/This portal link has already been used; ask .* for a new one\./);
  await expect(again.page.getByLabel("Password")).toHaveCount(0);
  await shot(again.page, "portal-used-390");
  const cookies = await again.context.cookies();
  expect(cookies.filter((c) => c.name === "hl_session")).toEqual([]);
  await again.context.close();
});

test("an admin who opens the link they just made is asked before being signed out; another portal's browser too", async ({ browser }) => {
  for (const width of [1280, 390]) {
    const { context, page } = await freshPage(browser, width);
    const admin = await signIn(page, "admin");
    // The admin makes the link with their own session, as the dashboard's API caller would.
    const made = await page.request.post("/api/v1/portal/sessions", {
      headers: { "content-type": "application/json", ...(await csrfHeader(page)) },
      data: { tenant: D.id, expiresInSeconds: 600 },
    });
    expect(made.status(), await made.text()).toBe(201);
    const link = await made.json();
    await page.goto(link.url);
    // Not opened at once: the page names who would be signed out and waits.
    await expect(page.getByRole("heading", { name: "You are signed in here" })).toBeVisible();
    await expect(page.getByText(`You are signed in to hookledger as ${admin.email} (admin).`)).toBeVisible();
    await expect(page.getByText(`This link opens the district portal of ${D.name}`)).toBeVisible();
    await expect(page.getByText(/private window/)).toBeVisible();
    await expect(page.getByRole("link", { name: "Back to the dashboard" })).toHaveAttribute("href", "/");
    expect(new URL(page.url()).pathname).toBe("/portal/open");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await page.keyboard.press("Tab");
    await expect(page.getByRole("button", { name: "Sign out and open the portal" })).toBeFocused();
    await shot(page, `portal-signed-in-${width}`);
    expect((await e2eDb().query("SELECT used_at FROM portal_sessions WHERE id = $1", [link.id])).rows).toEqual([{ used_at: null }]);

    await page.getByRole("button", { name: "Sign out and open the portal" }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByTestId("viewer-tenant")).toHaveText(D.name);
    await expect(page.getByTestId("portal-marker")).toBeVisible();
    // Signed out of hookledger for real: the portal's cookie is the browser's only session, even partitioned for framing.
    expect((await context.cookies()).filter((c) => c.name === "hl_session")).toHaveLength(1);

    if (width === 1280) {
      // The district's whole portal is open: a link for one of its subscriptions is another portal, named before it replaces it.
      const one = await page.request.post("/api/v1/portal/sessions", {
        headers: { authorization: `Bearer ${portalToken}`, "content-type": "application/json" },
        data: { tenant: D.id, subscriptionId: D.sub, readOnly: true },
      });
      expect(one.status()).toBe(201);
      await page.goto((await one.json()).url);
      await expect(page.getByRole("heading", { name: "Another portal is open here" })).toBeVisible();
      await expect(page.getByText(`This browser has the portal of ${D.name} open, with changes allowed.`)).toBeVisible();
      await expect(page.getByText(`its subscription ${D.subName} only) read-only`)).toBeVisible();
      await shot(page, "portal-other-portal-1280");
      // Keeping the one open: back to it, unchanged.
      await page.getByRole("link", { name: `Back to the portal of ${D.name}` }).click();
      await expect(page).toHaveURL(/\/$/);
      await expect(page.getByTestId("portal-marker")).not.toContainText("read-only");
      await expect(page.getByRole("link", { name: OTHER.subName })).toBeVisible();
    }
    await context.close();
  }
});

/** A link minted by the SaaS's backend, with its id (for the database's word on it). */
async function mintWithId(request: APIRequestContext, extra: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  const res = await request.post("/api/v1/portal/sessions", {
    headers: { authorization: `Bearer ${portalToken}`, "content-type": "application/json" },
    data: JSON.stringify({ tenant: D.id, expiresInSeconds: 3600, ...extra }),
  });
  const body = await res.json();
  expect(res.status(), JSON.stringify(body)).toBe(201);
  return body;
}

const revokedAt = async (id: string) => (await e2eDb().query("SELECT revoked_at FROM portal_sessions WHERE id = $1", [id])).rows[0].revoked_at;

/** An account of the test's own: replacing its session signs it out everywhere, as signing out does. */
async function newUser(role: string, tag: string) {
  const email = `e2e-${tag}-${role}-${run}@example.test`;
  const password = (await cli(["user", "create", "--email", email, "--role", role])).trim().split("\n").pop()!;
  return { email, password };
}

test("opening a link over a person's session signs that person out everywhere: another browser's copy of the cookie is refused", async ({ browser, request }) => {
  const person = await newUser("manager", "replaced");
  const { context, page } = await freshPage(browser);
  await signInWith(page, person);
  // Another browser with a copy of the person's cookies (a second tab's jar, or a stolen cookie).
  const copy = await browser.newContext();
  await copy.addCookies(await context.cookies());
  const copyPage = await copy.newPage();
  await copyPage.goto("/subscriptions");
  await expect(copyPage).toHaveURL(/\/subscriptions$/);

  const link = await mintWithId(request);
  await page.goto(link.url);
  await expect(page.getByRole("heading", { name: "You are signed in here" })).toBeVisible();
  await page.getByRole("button", { name: "Sign out and open the portal" }).click();
  await expect(page.getByTestId("portal-marker")).toBeVisible();
  await copyPage.goto("/subscriptions");
  await expect(copyPage).toHaveURL(/\/signin/);
  await copy.close();
  await context.close();
});

test("a person signing in over a portal ends the portal's session and leaves one session cookie, though the portal's is partitioned", async ({ browser, request }) => {
  // A sign-in form opened before the portal, sent after it.
  const other = await newUser("support", "over-portal");
  const shared = await freshPage(browser);
  const form = shared.page;
  await form.goto("/signin");
  const portal = await mintWithId(request);
  const portalTab = await shared.context.newPage();
  await portalTab.goto(portal.url);
  await expect(portalTab.getByTestId("portal-marker")).toBeVisible();
  expect(await revokedAt(portal.id)).toBeNull();
  await form.getByLabel("Email").fill(other.email);
  await form.getByLabel("Password").fill(other.password);
  await form.getByRole("button", { name: "Sign in" }).click();
  await expect(form).not.toHaveURL(/\/signin/);
  expect((await shared.context.cookies()).filter((c) => c.name === "hl_session")).toHaveLength(1);
  expect(await revokedAt(portal.id)).not.toBeNull();
  await portalTab.reload();
  await expect(portalTab.getByTestId("portal-marker")).toHaveCount(0);
  await shared.context.close();
});

test("a link for the open portal at another access level asks first, naming both levels", async ({ browser, request }) => {
  for (const width of [1280, 390]) {
    const { context, page } = await freshPage(browser, width);
    const full = await mintWithId(request);
    await page.goto(full.url);
    await expect(page.getByTestId("portal-marker")).not.toContainText("read-only");
    const readOnly = await mintWithId(request, { readOnly: true });
    await page.goto(readOnly.url);
    await expect(page.getByRole("heading", { name: "This portal is open here with changes allowed" })).toBeVisible();
    await expect(page.getByText(`This browser has the portal of ${D.name} open, with changes allowed.`)).toBeVisible();
    await expect(page.getByText("This link opens it read-only, and signs the open one out.")).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await shot(page, `portal-other-level-${width}`);
    await page.getByRole("link", { name: `Back to the portal of ${D.name}` }).click();
    await expect(page.getByTestId("portal-marker")).not.toContainText("read-only");
    expect((await e2eDb().query("SELECT used_at FROM portal_sessions WHERE id = $1", [readOnly.id])).rows).toEqual([{ used_at: null }]);
    await context.close();
  }
});

test("without scripts the link's page shows a button that opens the portal", async ({ browser, request }) => {
  const url = await mintLink(request);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(url);
  await expect(page.getByRole("heading", { name: "District portal" })).toBeVisible();
  await shot(page, "portal-open-page-390");
  await page.getByRole("button", { name: "Open the portal" }).click();
  await expect(page).toHaveURL(/\/$/);
  expect((await context.cookies()).map((c) => c.name)).toContain("hl_session");
  await context.close();
});

test("the SaaS frames the portal in its own page", async ({ browser, request }) => {
  const url = await mintLink(request);
  const { context, page } = await freshPage(browser);
  await page.goto(`http://localhost:${FRAMER_PORT}/frame?src=${encodeURIComponent(url)}`);
  const frame = page.frameLocator("iframe[title='District portal']");
  await expect(frame.getByTestId("viewer-tenant")).toHaveText(D.name);
  await expect(frame.getByTestId("portal-marker")).toBeVisible();
  await frame.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Subscriptions" }).click();
  await expect(frame.getByRole("link", { name: D.subName })).toBeVisible();
  await shot(page, "portal-framed-1280");
  await context.close();
});

test("a link for one subscription shows that one only: the district's other endpoint is absent and not found", async ({ browser, request }) => {
  const url = await mintLink(request, { subscriptionId: D.sub, readOnly: true });
  const { context, page } = await freshPage(browser);
  await page.goto(url);
  await expect(page).toHaveURL(new RegExp(`/subscriptions/${D.sub}$`));
  await expect(page.getByTestId("portal-marker")).toContainText("District portal (read-only)");
  // Read-only: nothing to rotate or pause.
  await expect(page.getByRole("button", { name: "Rotate signing secret…" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Pause deliveries" })).toHaveCount(0);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Subscriptions" }).click();
  await expect(page.getByRole("link", { name: D.subName })).toBeVisible();
  await expect(page.getByRole("link", { name: OTHER.subName })).toHaveCount(0);
  await page.goto("/");
  await expect(page.getByRole("link", { name: D.subName })).toBeVisible();
  await expect(page.getByText(OTHER.subName)).toHaveCount(0);
  await page.goto(`/subscriptions/${OTHER.sub}`);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await shot(page, "portal-one-subscription-1280");
  await context.close();
});

test("a district sends its own dead letter again once its endpoint is fixed: resume, Send again, delivered", async ({ browser, request }) => {
  // Paused, so the worker leaves the seeded dead letter alone.
  expect((await api(request, "PATCH", `/api/v1/subscriptions/${OTHER.sub}`, { state: "paused", reason: "e2e: a dead letter to look at" })).status).toBe(200);
  const evt = `evt_portal_dl_${run}`;
  const published = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: evt, type: "assignment.graded", data: { score: 12 }, subject: { tenant: D.id, studentId: `stu_dl_${run}` } },
    "producer",
  );
  expect(published.status, JSON.stringify(published.json)).toBe(202);
  const { rows } = await e2eDb().query("SELECT id FROM deliveries WHERE event_id = $1 AND subscription_id = $2", [evt, OTHER.sub]);
  const id: string = rows[0].id;
  await settleDelivery(id, [{ minutesAgo: 5, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 30, excerpt: "unknown term" }]);

  // The Dead letters page, on a phone and a desk: one is sent again from its page; many at once, by whoever sent the
  // link. No engineers.
  for (const width of [390, 1280]) {
    const { context, page } = await freshPage(browser, width);
    await page.goto(await mintLink(request));
    await expect(page).toHaveURL(/\/$/);
    await page.goto("/dlq");
    await expect(page.getByRole("heading", { name: "Dead letters by filter" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Redrive by filter" })).toHaveCount(0);
    await expect(page.getByTestId("redrive-hint")).toContainText("send a dead letter again from its page (Send again…)");
    await expect(page.getByTestId("redrive-hint")).toContainText("ask whoever sent you the portal link");
    await expect(page.locator("main")).not.toContainText(/engineer/i);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await shot(page, `portal-dlq-${width}`);
    await context.close();
  }

  // The endpoint is fixed: the district resumes it, then sends the dead letter again itself.
  const { context, page } = await freshPage(browser);
  await page.goto(await mintLink(request));
  await expect(page).toHaveURL(/\/$/);
  await page.goto(`/subscriptions/${OTHER.sub}`);
  await page.getByRole("button", { name: "Resume deliveries" }).click();
  await expect(page.getByRole("button", { name: "Pause deliveries" })).toBeVisible();
  await page.goto(`/deliveries/${id}`);
  await expect(page.getByTestId("delivery-sentence")).toContainText("Not delivered");
  await expect(page.getByTestId("redrive-hint")).toHaveCount(0);
  await page.getByRole("button", { name: "Send again…" }).click();
  const why = page.getByLabel("Why (kept in the audit log)");
  await expect(page.getByText("Send this delivery to your endpoint again, with the same webhook-id")).toBeVisible();
  await expect(page.getByText(/Operator's reason|incident or ticket/)).toHaveCount(0);
  await why.fill("Importer fixed: term_id now optional");
  await shot(page, "portal-send-again-1280");
  await page.getByRole("button", { name: "Send again", exact: true }).click();
  // The worker sends it to the SaaS's receiver (204): delivered.
  await expect(page.getByTestId("delivery-sentence")).toContainText(/^Delivered/, { timeout: 20_000 });
  await shot(page, "portal-sent-again-1280");
  // Who sent it again, in words: not the stored actor id.
  const timeline = page.getByRole("region", { name: "Timeline" });
  await expect(timeline).toContainText(`the district portal of ${D.id}`);
  await expect(timeline).not.toContainText(`portal:${D.id}`);
  const audit = await e2eDb().query("SELECT actor, reason FROM audit_entries WHERE action = 'delivery.redrive' AND target_id = $1", [id]);
  expect(audit.rows).toEqual([{ actor: `portal:${D.id}`, reason: "Importer fixed: term_id now optional" }]);
  await context.close();
});

test("a portal page left open when its link is revoked says, in the district's words, that the session ended", async ({ browser, request }) => {
  const res = await request.post("/api/v1/portal/sessions", {
    headers: { authorization: `Bearer ${portalToken}`, "content-type": "application/json" },
    data: JSON.stringify({ tenant: D.id, expiresInSeconds: 3600 }),
  });
  const link = await res.json();
  expect(res.status(), JSON.stringify(link)).toBe(201);
  const { context, page } = await freshPage(browser, 390);
  await page.goto(link.url);
  await page.goto(`/subscriptions/${D.sub}`);
  await expect(page.getByRole("heading", { name: D.subName })).toBeVisible();

  // The SaaS revokes the link (its user signed out there) while the page is open and polling.
  const revoked = await request.delete(`/api/v1/portal/sessions/${link.id}`, { headers: { authorization: `Bearer ${portalToken}` } });
  expect(revoked.status()).toBe(200);
  // What the page's own calls are answered: the district's words, not a token to create with a command it has never run.
  const refused = await page.request.get(`/api/v1/dashboard/subscriptions/${D.sub}`);
  expect(refused.status()).toBe(401);
  const body = await refused.json();
  expect(body.error.message).toBe("Your district portal session has ended; ask the service that gave the link to you for a new one.");
  expect(body.error.details).toEqual({ signIn: "/signin?portal=ended" });

  // The next refresh takes the page to the sign-in page's line, instead of "Could not refresh (…)" under each part.
  await expect(page).toHaveURL(/\/signin\?portal=ended$/, { timeout: 15_000 });
  await expect(page.getByTestId("portal-notice")).toHaveText("Your district portal session has ended; ask the service that gave the link to you for a new one.");
  await expect(page.getByText(/npx hookledger/)).toHaveCount(0);
  await shot(page, "portal-ended-390");
  await context.close();
});

test("a district adds an endpoint for a catalogued type and sends it that type's example before any real event exists", async ({ browser, request }) => {
  // The catalog as the SaaS's engineers wrote it: a type with its example data.
  const type = `attendance.recorded.p${run}`;
  const example = { student_id: "stu_881", status: "tardy", minutes_late: 7 };
  const made = await api(request, "POST", "/api/v1/event-types", { type, description: "A teacher took attendance.", example });
  expect(made.status, JSON.stringify(made.json)).toBe(201);

  const { context, page } = await freshPage(browser);
  await page.goto(await mintLink(request));
  await expect(page).toHaveURL(/\/$/);
  await page.goto("/subscriptions");
  await page.getByRole("button", { name: "New subscription" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name", { exact: true }).fill(`Roosevelt attendance ${run}`);
  await dialog.getByLabel("Endpoint URL").fill(`http://127.0.0.1:${FRAMER_PORT}/attendance`);
  await dialog.getByLabel(type).check();
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  await page.getByRole("link", { name: "Open the subscription" }).click();
  await expect(page.getByRole("heading", { name: `Roosevelt attendance ${run}` })).toBeVisible();

  const tests = page.getByRole("region", { name: "Test sends" });
  await tests.getByLabel("What to send").selectOption({ label: `An example ${type}` });
  await expect(tests.getByTestId("test-send-example")).toContainText('"minutes_late": 7');
  await tests.getByRole("button", { name: "Send test" }).click();
  await expect(tests.getByTestId("test-send-result")).toContainText(`HTTP 204`);
  await expect(tests.getByTestId("test-send-result")).toContainText(`example ${type}`);
  await expect(tests.getByTestId("test-sends-list")).toContainText(`example ${type}`);
  await shot(page, "portal-test-example-1280");
  // What the endpoint got: an event of that type carrying the example, marked as a test.
  const got = received.filter((r) => r.path === "/attendance").at(-1)!;
  expect(got.headers["hookledger-test"]).toBe("1");
  expect(JSON.parse(got.body)).toMatchObject({ type, data: example });

  await page.setViewportSize({ width: 390, height: 844 });
  await expect(tests.getByLabel("What to send")).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await tests.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${process.env.HOOKLEDGER_SCREENS_DIR ?? "test-results/screens"}/portal-test-example-390.png` });
  await context.close();
});
