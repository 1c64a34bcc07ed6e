// The tenant boundary as a district's integration manager sees it. Two
// districts, Lincoln and Jefferson, each with a subscription, events, delivered
// and dead-lettered deliveries (Jefferson also a redrive batch), made through
// the CLI and the API as an operator would. Lincoln's manager signs in, sees
// its own endpoint, deliveries, dead letters, rotates its secret and sends a
// test; nothing of Jefferson's appears on any page, and Jefferson's URLs answer
// the not-found page. The second test walks app/(dashboard) for every page, so
// a page added later without a case here fails until it gets one.
import { readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { api, cli, deliveryFor, signIn, signInWith } from "./helpers";
import { closeE2eDb, e2eDb, settleDelivery, shot } from "./dashboard-seed";
import { createDistrict, signInAsManager } from "./district";

const run = Date.now().toString(36);
const L = { id: `lincoln_${run}`, name: `Lincoln USD ${run}`, sub: `sub_lin_${run}`, subName: `Lincoln SIS ${run}`, student: `stu_lin_${run}`, event: `evt_lin_${run}` };
const J = {
  id: `jefferson_${run}`,
  name: `Jefferson County ${run}`,
  sub: `sub_jef_${run}`,
  subName: `Jefferson SIS ${run}`,
  student: `stu_jef_${run}`,
  event: `evt_jef_${run}`,
};
/** Filled while seeding. */
const ids = { lDelivered: "", lDead: "", jDelivery: "", jDead: "", jBatch: "" };
const manager = { email: `lincoln-manager-${randomBytes(3).toString("hex")}@example.test`, password: "" };

/** Everything of Jefferson's a Lincoln page must never show. */
const jeffersonStrings = () => [J.id, J.name, J.sub, J.subName, J.student, J.event, ids.jDelivery, ids.jDead, ids.jBatch].filter(Boolean);

let receiver: http.Server;
const received: string[] = [];

test.beforeAll(async ({ request }) => {
  test.setTimeout(180_000);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(String(req.headers["webhook-id"] ?? ""));
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as AddressInfo).port;

  for (const t of [L, J]) await cli(["tenant", "create", "--id", t.id, "--name", t.name]);
  const lsub = await api(request, "POST", "/api/v1/subscriptions", {
    id: L.sub,
    name: L.subName,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: L.id,
  });
  expect(lsub.status, JSON.stringify(lsub.json)).toBe(201);
  const jsub = await api(request, "POST", "/api/v1/subscriptions", {
    id: J.sub,
    name: J.subName,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: ["assignment.graded"],
    tenant: J.id,
  });
  expect(jsub.status, JSON.stringify(jsub.json)).toBe(201);

  const publish = async (t: typeof L, n: string) => {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `${t.event}_${n}`, type: "assignment.graded", data: { score: 88 }, subject: { tenant: t.id, studentId: t.student } },
      "producer",
    );
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    return deliveryFor(r, t.sub);
  };
  // Lincoln: one delivered by the worker to the real receiver.
  ids.lDelivered = await publish(L, "ok");
  // The dead letters are settled while each subscription is paused, so the e2e worker leaves them alone.
  for (const [t, key] of [
    [L, "lDead"],
    [J, "jDead"],
  ] as const) {
    expect((await api(request, "PATCH", `/api/v1/subscriptions/${t.sub}`, { state: "paused", reason: "e2e seeding" })).status).toBe(200);
    ids[key] = await publish(t, "dead");
    await settleDelivery(ids[key], [{ minutesAgo: 30, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 40, excerpt: `missing field term_id (${t.id})` }]);
  }
  // A delivery of Jefferson's still pending, and a redrive batch of a second dead letter (for a batch id).
  ids.jDelivery = await publish(J, "held");
  const jGone = await publish(J, "gone");
  await settleDelivery(jGone, [{ minutesAgo: 20, status: 410, errorClass: "http_4xx", outcome: "dead_letter", ms: 30, excerpt: "Gone" }], { reason: "gone" });
  // A redrive of a paused subscription is refused (it would only be held): Jefferson is resumed for it; its sends then fail and retry.
  expect((await api(request, "PATCH", `/api/v1/subscriptions/${J.sub}`, { state: "active" })).status).toBe(200);
  const batch = await api(request, "POST", "/api/v1/redrives", { filter: { subscriptionId: J.sub, statusCode: 410 }, reason: "INC-1 e2e", ratePerSecond: 1 }, "admin");
  expect(batch.status, JSON.stringify(batch.json)).toBe(201);
  ids.jBatch = batch.json.id;
  // A notice to Jefferson's contact (the Notifications page and the audit page's section list notices by tenant).
  await e2eDb().query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, last_error)
     VALUES ($1, $2, $3, 'paused', 'email', $4, $5, 'seeded', $1, 'failed', 'seeded, not sent')`,
    [`ntf_${J.id}`, J.id, J.sub, `it@${J.id}.example`, `${J.name}: your endpoint ${J.subName} is paused`],
  );
  expect((await api(request, "PATCH", `/api/v1/subscriptions/${L.sub}`, { state: "active" })).status).toBe(200);

  manager.password = (await cli(["user", "create", "--email", manager.email, "--role", "manager", "--tenant", L.id])).trim().split("\n").pop()!;
});

test.afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await closeE2eDb();
});

/**
 * Nothing of Jefferson's in what the page shows (text) nor in what it carries
 * (the HTML with the server's payload for the client). A value the URL itself
 * carries (a search for Jefferson's student, a filter naming its subscription)
 * may be echoed back: that is the viewer's own input, not a leak.
 */
async function expectNoJefferson(page: Page, url: string) {
  // Let the client's first polls land: a leak through the API would show up after hydration.
  await page.waitForLoadState("networkidle").catch(() => undefined);
  const asked = decodeURIComponent(url);
  const text = await page.locator("body").innerText();
  const html = await page.content();
  for (const s of jeffersonStrings()) {
    if (asked.includes(s)) continue;
    expect(text, `${url} shows ${s}`).not.toContain(s);
    expect(html, `${url} carries ${s}`).not.toContain(s);
  }
}

/**
 * The not-found page, answered exactly as for an id that never existed (same status, same heading), so a
 * district cannot tell another district's ids from made-up ones.
 */
async function expectNotFound(page: Page, url: string) {
  const made = url.replace(/\/[^/]+$/, `/never_${run}`);
  const never = await page.goto(made);
  await expect(page.getByRole("heading", { level: 1, name: "Not found" }), `${made} answers not-found`).toBeVisible();
  const res = await page.goto(url);
  await expect(page.getByRole("heading", { level: 1, name: "Not found" }), `${url} answers not-found`).toBeVisible();
  expect(res?.status(), `${url} answers as ${made} does`).toBe(never?.status());
  await expectNoJefferson(page, url);
}

test("Lincoln's manager sees Lincoln only, manages its endpoint, and Jefferson's URLs are not found", async ({ page }) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signInWith(page, manager);
  await page.goto("/");
  await expect(page.getByTestId("viewer-tenant")).toHaveText(L.name);
  const endpoint = page.getByTestId("district-endpoint");
  await expect(endpoint).toHaveCount(1);
  await expect(endpoint).toContainText(L.subName);
  await expect(endpoint).toContainText("Dead letters");
  // No global view: no Alerts link, no tenant picker.
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Alerts" })).toHaveCount(0);
  await expectNoJefferson(page, "/");
  await shot(page, "tenant-landing-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "tenant-landing-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  // The subscriptions list: Lincoln's only, no tenant picker.
  await page.goto("/subscriptions");
  await expect(page.getByRole("link", { name: L.subName })).toBeVisible();
  // (exact: the search box's label names the tenant among the fields it matches)
  await expect(page.getByLabel("Tenant", { exact: true })).toHaveCount(0);
  await expect(page.getByRole("option", { name: "Tenant", exact: true })).toHaveCount(0);
  await expectNoJefferson(page, "/subscriptions");
  // New subscription: the tenant is fixed to Lincoln, and * is not offered.
  await page.getByRole("button", { name: "New subscription" }).click();
  const dialog = page.getByRole("dialog", { name: "New subscription" });
  await expect(dialog.getByTestId("fixed-tenant")).toContainText(L.name);
  await expect(dialog.getByText("every type, also future ones")).toHaveCount(0);
  await dialog.getByRole("button", { name: "Cancel" }).click();

  // The lookup answers Lincoln's student, not Jefferson's.
  await page.goto(`/?q=${L.student}`);
  await expect(page.getByTestId("delivery-result").first()).toBeVisible();
  await expect(page.getByTestId("delivery-result")).toHaveCount(2);
  await page.goto(`/?q=${J.student}`);
  await expect(page.getByText(`No deliveries match “${J.student}”.`)).toBeVisible();
  await expectNoJefferson(page, `/?q=${J.student}`);

  // Lincoln's endpoint: its deliveries, the timeline, the grouped answers, its dead letter with the reason.
  await page.goto(`/subscriptions/${L.sub}`);
  await expect(page.getByRole("heading", { level: 1, name: new RegExp(L.subName) })).toBeVisible();
  await expect(page.getByText(L.name).first()).toBeVisible();
  await expect(
    page
      .getByTestId("deliveries-list")
      .getByRole("listitem")
      .filter({ hasText: `${L.event}_ok` }),
  ).toContainText("delivered", { timeout: 30_000 });
  await expect(page.getByTestId("answer-groups")).toContainText("missing field term_id");
  await expectNoJefferson(page, `/subscriptions/${L.sub}`);
  await shot(page, "tenant-subscription-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "tenant-subscription-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  // Rotate Lincoln's secret: the new one is shown once.
  await page.getByRole("button", { name: "Rotate signing secret…" }).click();
  await page.getByRole("form", { name: "Rotate signing secret" }).getByRole("button", { name: "Rotate now" }).click();
  await expect(page.getByTestId("secret-once").getByLabel("Signing secret")).toHaveText(/^whsec_/);
  await expect(page.getByTestId("secrets-list").getByRole("listitem")).toHaveCount(2);
  // A test send reaches Lincoln's receiver.
  const tests = page.getByRole("region", { name: "Test sends" });
  const before = received.length;
  await tests.getByRole("button", { name: "Send test" }).click();
  await expect(tests.getByTestId("test-send-result")).toContainText("HTTP 204");
  expect(received.length).toBeGreaterThan(before);

  // Lincoln's audit trail: its own rotation, no tenant column (one district), nothing of Jefferson's (its pause, its batch).
  await page.goto("/audit");
  await expect(page.locator("main").getByRole("link", { name: L.sub }).first()).toBeVisible();
  await expect(page.getByTestId("audit-tenant")).toHaveCount(0);
  await expectNoJefferson(page, "/audit");

  await page.goto(`/deliveries/${ids.lDead}`);
  await expect(page.getByText("missing field term_id").first()).toBeVisible();
  await page.goto(`/dlq`);
  await expect(page.locator("main")).toContainText(L.subName);
  await expectNoJefferson(page, "/dlq");

  // Jefferson's objects are answered as if they did not exist.
  await expectNotFound(page, `/subscriptions/${J.sub}`);
  await expectNotFound(page, `/deliveries/${ids.jDelivery}`);
  await expectNotFound(page, `/deliveries/${ids.jDead}`);
  await expectNotFound(page, `/redrives/${ids.jBatch}`);
});

// Every page under app/(dashboard), as its route ("/subscriptions/[id]"). Route groups "(x)" add no segment.
function dashboardRoutes(): string[] {
  const root = path.join(process.cwd(), "app", "(dashboard)");
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (e.name === "page.tsx") {
        const rel = path
          .relative(root, dir)
          .split(path.sep)
          .filter((s) => s && !/^\(.*\)$/.test(s));
        out.push(`/${rel.join("/")}`);
      }
    }
  };
  walk(root);
  return out.sort();
}

type Expect = "page" | "not-found" | "forbidden";
/** Per route: the URLs Lincoln's manager opens with Jefferson's ids and names put wherever the page takes one, and what it must answer. */
const CASES: Record<string, () => { url: string; expect: Expect }[]> = {
  "/": () => [
    { url: "/", expect: "page" },
    { url: `/?q=${J.student}`, expect: "page" },
    { url: `/?q=${J.id}`, expect: "page" },
    { url: `/?q=${J.event}_dead`, expect: "page" },
  ],
  "/subscriptions": () => [
    { url: "/subscriptions", expect: "page" },
    { url: `/subscriptions?tenant=${J.id}&archived=true`, expect: "page" },
  ],
  "/subscriptions/[id]": () => [{ url: `/subscriptions/${J.sub}`, expect: "not-found" }],
  "/deliveries/[id]": () => [
    { url: `/deliveries/${ids.jDelivery}`, expect: "not-found" },
    { url: `/deliveries/${ids.jDead}`, expect: "not-found" },
  ],
  "/dlq": () => [
    { url: "/dlq", expect: "page" },
    { url: `/dlq?subscriptionId=${J.sub}`, expect: "page" },
  ],
  // A manager may not redrive: the page is refused; either way nothing of Jefferson's shows.
  "/dlq/redrive": () => [{ url: `/dlq/redrive?subscriptionId=${J.sub}`, expect: "forbidden" }],
  "/redrives": () => [
    { url: "/redrives", expect: "page" },
    { url: "/redrives?kind=redrive", expect: "page" },
  ],
  "/redrives/[id]": () => [{ url: `/redrives/${ids.jBatch}`, expect: "not-found" }],
  // The system-wide alert conditions are not a district's page.
  "/alerts": () => [{ url: "/alerts", expect: "forbidden" }],
  // The event catalog is global; the subscriptions named under each type are Lincoln's own.
  "/catalog": () => [{ url: "/catalog", expect: "page" }],
  // Lincoln's contacts and notices only; Jefferson's notices (seeded below) must not show.
  "/notifications": () => [{ url: "/notifications", expect: "page" }],
  "/audit": () => [
    { url: "/audit", expect: "page" },
    { url: `/audit?targetId=${J.sub}`, expect: "page" },
  ],
  "/admin/users": () => [{ url: "/admin/users", expect: "forbidden" }],
  "/admin/tokens": () => [{ url: "/admin/tokens", expect: "forbidden" }],
  "/admin/tenants": () => [{ url: "/admin/tenants", expect: "forbidden" }],
  "/admin/retention": () => [{ url: `/admin/retention?tenant=${J.id}`, expect: "forbidden" }],
};

test("every dashboard page, opened by Lincoln's manager with Jefferson's ids, shows nothing of Jefferson's", async ({ page }) => {
  test.setTimeout(300_000);
  const routes = dashboardRoutes();
  expect(routes.length).toBeGreaterThan(5);
  // A page without a case fails here: decide what a district's manager may see on it first.
  expect(
    routes.filter((r) => !CASES[r]),
    "dashboard pages with no cross-tenant case",
  ).toEqual([]);
  expect(
    Object.keys(CASES).filter((r) => !routes.includes(r)),
    "cases for pages that no longer exist",
  ).toEqual([]);

  await page.setViewportSize({ width: 1280, height: 900 });
  await signInWith(page, manager);
  for (const route of routes) {
    for (const c of CASES[route]()) {
      if (c.expect === "not-found") {
        await expectNotFound(page, c.url);
        continue;
      }
      const res = await page.goto(c.url);
      if (c.expect === "forbidden") {
        expect([403, 404, 200], `${c.url} status`).toContain(res?.status());
        await expect(page.getByRole("heading", { level: 1 }), `${c.url} is refused`).toHaveText(/403|Not allowed|Forbidden|Not found/i);
      } else {
        expect(res?.status(), `${c.url} status`).toBe(200);
        await expect(page.getByTestId("viewer-tenant"), `${c.url} names the district`).toHaveText(L.name);
      }
      await expectNoJefferson(page, c.url);
    }
  }
});

test("a global admin adds a district, gives it a manager and a producer token, and reads the audit trail by tenant", async ({ page, request }) => {
  test.setTimeout(180_000);
  const M = { id: `madison_${run}`, name: `Madison Metro ${run}` };
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "admin");
  await page.goto("/admin/tenants");
  await expect(page.getByRole("heading", { level: 1, name: "Tenants" })).toBeVisible();
  await expect(page.getByTestId("tenant-row").filter({ hasText: L.id })).toContainText(L.name);
  const form = page.getByRole("form", { name: "Add a tenant" });
  // A bad id is refused next to the form, and nothing is made.
  await form.getByLabel("Id (what producers send as subject.tenant)").fill("not a tenant id!");
  await form.getByLabel("Name").fill(M.name);
  await form.getByRole("button", { name: "Create tenant" }).click();
  await expect(form.getByRole("alert")).toContainText("letters, digits");
  await form.getByLabel("Id (what producers send as subject.tenant)").fill(M.id);
  await form.getByRole("button", { name: "Create tenant" }).click();
  await expect(form.getByRole("status")).toContainText(`Created ${M.name} (${M.id})`);
  await expect(page.getByTestId("tenant-row").filter({ hasText: M.id })).toContainText(M.name);
  expect((await api(request, "GET", "/api/v1/tenants")).json.items.map((t: { id: string }) => t.id)).toContain(M.id);
  await shot(page, "tenant-admin-tenants-1280");

  // A global admin moves a tenant-less subscription into Madison from its configuration form.
  const msub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_mad_${run}`,
    name: `Madison SIS ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: ["roster.updated"],
  });
  expect(msub.status, JSON.stringify(msub.json)).toBe(201);
  await page.goto(`/subscriptions/sub_mad_${run}`);
  const config = page.getByRole("region", { name: "Configuration" });
  await expect(config).toContainText("none: every tenant's events");
  await config.getByRole("button", { name: "Edit" }).click();
  await config.getByLabel(/^Tenant/).fill(M.id);
  await config.getByRole("button", { name: "Save" }).click();
  await expect(config.getByRole("form", { name: "Edit configuration" })).toHaveCount(0);
  expect((await api(request, "GET", `/api/v1/subscriptions/sub_mad_${run}`)).json.tenant).toBe(M.id);
  await expect(config).toContainText(M.id);

  // A manager confined to Madison.
  await page.goto("/admin/users");
  const email = `madison-manager-${randomBytes(3).toString("hex")}@example.test`;
  const addUser = page.locator("form").filter({ hasText: "Add a user" });
  await addUser.getByLabel("Email").fill(email);
  await addUser.getByLabel("Role").selectOption("manager");
  await addUser.getByLabel(/^Tenant/).fill(M.id);
  await addUser.getByRole("button", { name: "Create user" }).click();
  await expect(addUser.getByRole("status")).toContainText(email);
  await page.reload();
  await expect(page.getByRole("row").filter({ hasText: email })).toContainText(M.name);

  // A producer token confined to Madison.
  await page.goto("/admin/tokens");
  const addToken = page.locator("form").filter({ hasText: "Create an API token" });
  await addToken.getByLabel("Name (shown in audit rows)").fill(`madison-sis-${run}`);
  await addToken.getByLabel("Role").selectOption("producer");
  await addToken.getByLabel(/^Tenant/).fill(M.id);
  await addToken.getByRole("button", { name: "Create token" }).click();
  await expect(addToken.getByRole("status")).toContainText(`madison-sis-${run}`);
  await page.reload();
  await expect(page.getByRole("row").filter({ hasText: `madison-sis-${run}` })).toContainText(M.name);
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "tenant-admin-tokens-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  // The audit trail, by tenant: a global viewer sees the column and can filter on it.
  await page.goto(`/audit?tenant=${L.id}`);
  const tenantCells = page.getByTestId("audit-tenant");
  await expect(tenantCells.first()).toContainText(L.name);
  for (const cell of await tenantCells.all()) await expect(cell).toContainText(L.name);
  await page.goto(`/audit?targetId=${M.id}`);
  await expect(page.locator("main")).toContainText(/tenant created/i);
});

test("with thousands of districts, an admin picks one past the first 5,000 by typing it; an unknown one is refused", async ({ page }) => {
  test.setTimeout(180_000);
  // 5,100 districts: the tenant lists used to stop at 5,000, so the last ones could be neither listed nor chosen.
  // Ids that sort after every other spec's, so the Tenants page's first page stays theirs.
  const prefix = `zz_bulk_${run}_`;
  await e2eDb().query(`INSERT INTO tenants (id, name) SELECT $1 || lpad(g::text, 5, '0'), 'Bulk District ' || g || ' ${run}' FROM generate_series(1, 5100) g`, [prefix]);
  const far = { id: `${prefix}05090`, name: `Bulk District 5090 ${run}` };
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "admin");
  await page.goto("/admin/users");
  const addUser = page.locator("form").filter({ hasText: "Add a user" });
  const tenant = addUser.getByLabel(/^Tenant/);
  // Typing part of the id suggests the matching districts, the far one among them.
  await tenant.fill(`${prefix}0509`);
  await expect(addUser.getByTestId("tenant-suggestions").locator(`option[value="${far.id}"]`)).toHaveCount(1);
  await tenant.fill(far.id);
  const email = `bulk-${randomBytes(3).toString("hex")}@example.test`;
  await addUser.getByLabel("Email").fill(email);
  await addUser.getByLabel("Role").selectOption("manager");
  await addUser.getByRole("button", { name: "Create user" }).click();
  await expect(addUser.getByRole("status")).toContainText(email);
  await page.reload();
  await expect(page.getByRole("row").filter({ hasText: email })).toContainText(far.name);

  // A district that does not exist is refused with a message, and no account is made.
  const nobody = `nobody-${randomBytes(3).toString("hex")}@example.test`;
  await addUser.getByLabel("Email").fill(nobody);
  await addUser.getByLabel(/^Tenant/).fill(`${prefix}99999`);
  await addUser.getByRole("button", { name: "Create user" }).click();
  await expect(addUser.getByRole("alert")).toContainText(`there is no tenant ${prefix}99999`);
  await page.reload();
  await expect(page.getByRole("row").filter({ hasText: nobody })).toHaveCount(0);

  // The Subscriptions page's tenant box suggests it too, though no subscription names it yet (an admin's box asks the tenants list).
  await page.goto("/subscriptions");
  await page.getByLabel("Tenant", { exact: true }).fill(`${prefix}0509`);
  await expect(page.locator(`#subscription-tenants option[value="${far.id}"]`)).toHaveCount(1);

  // The audit filter takes the far district too.
  await page.goto(`/audit?tenant=${far.id}`);
  await expect(page.getByLabel("Tenant", { exact: true })).toHaveValue(far.id);
  await expect(page.getByTestId("audit-tenant").first()).toContainText(far.name);
});

test("a district with no endpoints yet is pointed to where it makes one", async ({ page }) => {
  const run = Date.now().toString(36);
  const d = await createDistrict(`empty_${run}`, `Birch Hill ${run}`);
  await signInAsManager(page, d);
  await page.goto("/");
  const empty = page.getByText("No endpoints yet").locator("..");
  await expect(empty).toContainText("Create one from Subscriptions");
  await empty.getByRole("link", { name: "Subscriptions" }).click();
  await expect(page).toHaveURL(/\/subscriptions$/);
});
