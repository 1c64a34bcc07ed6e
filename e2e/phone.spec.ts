// Every dashboard page at 390 px, as a global admin and as a district's manager: nothing scrolls sideways
// (document.documentElement.scrollWidth <= 390), each page is in the dashboard's frame, and no control of its server
// HTML is live before React hydrates it. The pages are the
// route folders of app/(dashboard), so a page added later fails here until it has a URL below.
import { readdirSync } from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { closeE2eDb, settleAllDelivered, settleDelivery, shot, whilePaused } from "./dashboard-seed";
import { createDistrict, signInAsManager, type District } from "./district";

const run = Date.now().toString(36);
const ids = { sub: `sub_phone_${run}`, dead: "", gone: "", delivered: "", batch: "" };
let district: District;

/** Every page under app/(dashboard), as its route ("/subscriptions/[id]"). Route groups "(x)" add no segment. */
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

/** The address each page is opened at: its ids are the seeded district's, its filters filled in. */
const URLS: Record<string, () => string> = {
  "/": () => `/?q=stu_phone_${run}`,
  "/deliveries/[id]": () => `/deliveries/${ids.dead}`,
  "/subscriptions": () => "/subscriptions",
  "/subscriptions/[id]": () => `/subscriptions/${ids.sub}`,
  "/dlq": () => "/dlq",
  "/dlq/redrive": () => `/dlq/redrive?subscriptionId=${ids.sub}`,
  "/redrives": () => "/redrives",
  "/redrives/[id]": () => `/redrives/${ids.batch}`,
  "/alerts": () => "/alerts",
  "/catalog": () => "/catalog",
  "/audit": () => "/audit",
  "/notifications": () => "/notifications",
  "/admin/users": () => "/admin/users",
  "/admin/tokens": () => "/admin/tokens",
  "/admin/tenants": () => "/admin/tenants",
  "/admin/retention": () => "/admin/retention",
};

test.beforeAll(async ({ request }) => {
  test.setTimeout(180_000);
  district = await createDistrict(`phone_${run}`, `Phone Valley USD ${run}`);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: ids.sub,
    name: `Phone Valley SIS with a rather long name ${run}`,
    url: "http://127.0.0.1:9/webhooks/a/rather/long/path/that/does/not/fit/on/a/phone",
    eventTypes: ["assignment.graded"],
    tenant: district.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  await whilePaused(request, ids.sub, async () => {
    const attempts = {
      dead: {
        minutesAgo: 12,
        status: 422,
        errorClass: "http_4xx",
        outcome: "dead_letter",
        ms: 40,
        excerpt: '{"error":"missing field term_id","detail":"the gradebook importer requires term_id on every assignment.graded event"}',
      },
      gone: { minutesAgo: 9, status: 410, errorClass: "http_4xx", outcome: "dead_letter", ms: 30, excerpt: "Gone" },
      delivered: { minutesAgo: 5, status: 200, outcome: "delivered", ms: 18 },
    } as const;
    for (const key of ["dead", "gone", "delivered"] as const) {
      const r = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_phone_${run}_${key}`, type: "assignment.graded", data: { score: 91 }, subject: { tenant: district.id, studentId: `stu_phone_${run}` } },
        "producer",
      );
      expect(r.status, JSON.stringify(r.json)).toBe(202);
      ids[key] = deliveryFor(r, ids.sub);
      await settleDelivery(ids[key], [attempts[key]], { reason: key === "gone" ? "gone" : "permanent" });
    }
    // A busy district: four figures on its pages (1,200 delivered in 24 h), which a browser in another locale would
    // format otherwise than the server.
    for (let b = 0; b < 3; b++) {
      const events = Array.from({ length: 400 }, (_, i) => ({
        id: `evt_phone_${run}_busy_${b}_${i}`,
        type: "assignment.graded",
        data: { score: 80 },
        subject: { tenant: district.id, studentId: `stu_phone_busy_${i}` },
      }));
      const r = await api(request, "POST", "/api/v1/events/batch?deliveries=false", { events }, "producer");
      expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(200);
    }
    await settleAllDelivered(ids.sub, 30);
  });
  // A batch for the batch pages; it takes the 410 only, so the 422 stays on the Dead letters page.
  const batch = await api(request, "POST", "/api/v1/redrives", { filter: { subscriptionId: ids.sub, statusCode: 410 }, reason: "INC-7 phone check", ratePerSecond: 1 });
  expect(batch.status, JSON.stringify(batch.json)).toBe(201);
  ids.batch = batch.json.id;
});

test.afterAll(closeE2eDb);

// A viewer whose browser formats numbers otherwise than the server (1.234 in Germany): the text React hydrates must
// still be the server's, or it reports a mismatch (caught by walk).
test.use({ locale: "de-DE" });

/**
 * The controls a page's server HTML leaves live before React listens (scripts off: the same HTML, never hydrated).
 * Each must work without React, in a form with its own `action`; any other would drop a click or a choice, or send
 * the browser's own GET with the form's fields in the address.
 */
async function liveBeforeHydration(page: Page, url: string): Promise<string[]> {
  await page.goto(url);
  return page.evaluate(() =>
    // What acts on a click or a change (a text field only keeps its text; its form cannot be sent while its button waits).
    [...document.querySelectorAll("button:enabled, select:enabled, input[type=checkbox]:enabled, input[type=radio]:enabled, input[type=submit]:enabled")]
      .filter((e) => !e.closest("form[action]"))
      .map((e) => `${e.tagName.toLowerCase()} "${(e.getAttribute("aria-label") ?? (e as HTMLElement).innerText ?? "").trim().slice(0, 40)}"`),
  );
}

/**
 * Opens each page at 390 px and checks it: in the frame, no sideways scroll, nothing live before hydration, no error
 * in the browser (a hydration mismatch is one: the server's HTML and the browser's first render differ; a CSP violation
 * another); one screenshot each.
 */
async function walk(page: Page, who: string) {
  const wide: string[] = [];
  const early: string[] = [];
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message.slice(0, 300)}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /hydrat|Minified React error|Content Security Policy/i.test(m.text())) errors.push(`${page.url()}: ${m.text().slice(0, 300)}`);
  });
  // A script the page's CSP refused (zod's eval probe, when a client component imports a schema, is one): reported
  // by the browser as an event, which the console shows only sometimes.
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  const serverOnly = await page
    .context()
    .browser()!
    .newContext({ javaScriptEnabled: false, baseURL: new URL(page.url()).origin });
  await serverOnly.addCookies(await page.context().cookies());
  const htmlOnly = await serverOnly.newPage();
  for (const route of dashboardRoutes()) {
    const url = URLS[route]();
    for (const c of await liveBeforeHydration(htmlOnly, url)) early.push(`${url}: ${c}`);
    await page.goto(url);
    await expect(page.getByRole("navigation", { name: "Main" }), `${url}: in the dashboard's frame`).toBeVisible();
    await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
    // Let the client's first polls land: a table that fills in after hydration could widen the page.
    await page.waitForLoadState("networkidle").catch(() => undefined);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    // Every navigation item in sight (the items wrap; none is pushed off the side). Measured in one round trip: a
    // boundingBox per item costs a second a page.
    const offside = await page.getByRole("navigation", { name: "Main" }).evaluate((nav) =>
      [...nav.querySelectorAll("a")]
        .filter((a) => a.getClientRects().length > 0)
        .filter((a) => {
          const box = a.getBoundingClientRect();
          return box.x < 0 || box.x + box.width > 390;
        })
        .map((a) => a.innerText),
    );
    expect(offside, `${url}: nav items out of sight`).toEqual([]);
    // The admin lists are cards on a phone: nothing of theirs is scrolled off to the side inside its box.
    if (["/admin/users", "/admin/tokens", "/admin/tenants"].includes(route)) {
      const sideways = await page.evaluate(
        () => [...document.querySelectorAll("table")].filter((t) => t.parentElement!.scrollWidth > t.parentElement!.clientWidth + 1).length,
      );
      expect(sideways, `${url}: its tables are cards, not scrolled sideways`).toBe(0);
    }
    // The dead letters' groups: the depth, the age and the actions in sight, not scrolled off in a table.
    if (route === "/dlq") {
      const group = page.getByTestId("dlq-group").first();
      for (const part of [group.getByText("Depth"), group.getByText("oldest"), group.getByRole("link").last()]) {
        const box = await part.boundingBox();
        expect(box && box.x + box.width <= 390, `${url}: a group's ${await part.innerText()} in sight`).toBe(true);
      }
    }
    if (width > 390) wide.push(`${url}: ${width} px`);
    await shot(page, `phone-${who}${route === "/" ? "-lookup" : route.replace(/[^a-z]+/g, "-").replace(/-$/, "")}`);
  }
  await serverOnly.close();
  expect(wide, `pages wider than the phone (${who})`).toEqual([]);
  expect(early, `controls live before hydration (${who})`).toEqual([]);
  expect(errors, `errors in the browser (${who})`).toEqual([]);
}

test("every dashboard page has a URL here", () => {
  const routes = dashboardRoutes();
  expect(routes.length).toBeGreaterThan(10);
  expect(
    routes.filter((r) => !URLS[r]),
    "dashboard pages this spec does not open at 390 px",
  ).toEqual([]);
  expect(
    Object.keys(URLS).filter((r) => !routes.includes(r)),
    "URLs for pages that no longer exist",
  ).toEqual([]);
});

test("no page scrolls sideways at 390 px, for an admin", async ({ page }) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, "admin");
  await walk(page, "admin");
});

test("no page scrolls sideways at 390 px, for a district's manager", async ({ page }) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signInAsManager(page, district);
  await walk(page, "manager");
});
