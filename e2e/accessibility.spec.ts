// Every dashboard page, as a global admin and as a district's portal, is held to WCAG 2.1 A and AA by axe-core: the
// pages of the route list (the one page-titles.spec.ts walks), a lookup with results, and the pages a support agent
// or a district opens most (Lookup, Subscriptions, a subscription, Dead letters) at 390 px as well. A serious or
// critical violation fails the run, listed by page, rule and the elements at fault, all pages read before it fails.
import { expect, test, type Page } from "@playwright/test";
import { canAs } from "../lib/auth/permissions";
import { PAGE_PERMISSIONS } from "../components/dashboard/page-access";
import { api, signIn } from "./helpers";
import { closeE2eDb, seedDetailPages } from "./dashboard-seed";
import { audit } from "./axe";

test.afterAll(closeE2eDb);

const run = Date.now().toString(36);
const tenant = `a11y_${run}`;
const narrow = [`/?q=stu_a${run}`, "/subscriptions", "/subscriptions/[id]", "/dlq"];
let pathOf: (route: string) => string = (route) => route;

test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  expect((await api(request, "POST", "/api/v1/tenants", { id: tenant, name: `Alder ${run} Schools` })).status).toBe(201);
  const { ids } = await seedDetailPages(request, {
    tenant,
    name: `Alder SIS ${run}`,
    eventId: `evt_a11y_${run}`,
    studentId: `stu_a${run}`,
    attempts: [
      { minutesAgo: 9, status: 503, errorClass: "http_5xx", outcome: "retry", ms: 40 },
      { minutesAgo: 2, status: 410, errorClass: "http_410", outcome: "dead_letter", ms: 12 },
    ],
    reason: "gone",
    incident: "INC-7 a11y",
  });
  pathOf = (route) => route.replace("[id]", ids[route] ?? "");
});

/** Every route at 1280 px (and a lookup with results), the narrow ones at 390 px: the violations found, all pages read. */
async function walk(p: Page, who: string, routes: string[]): Promise<string[]> {
  const found: string[] = [];
  await p.setViewportSize({ width: 1280, height: 900 });
  for (const path of [...routes.map(pathOf), `/?q=stu_a${run}`]) {
    await p.goto(path);
    found.push(...(await audit(p, `${who} ${path} @1280`)));
  }
  await p.setViewportSize({ width: 390, height: 844 });
  for (const path of narrow.map(pathOf)) {
    await p.goto(path);
    found.push(...(await audit(p, `${who} ${path} @390`)));
  }
  if (found.length) console.log(`axe, ${who}: ${found.length} serious or critical violations\n${found.join("\n")}`);
  return found;
}

test("every dashboard page, as an admin, has no serious WCAG 2.1 AA violation at 1280 px, key pages at 390 px too", async ({ page }) => {
  test.setTimeout(120_000);
  await signIn(page, "admin");
  expect(await walk(page, "admin", Object.keys(PAGE_PERMISSIONS))).toEqual([]);
});

test("every page a district's portal opens has no serious WCAG 2.1 AA violation at 1280 px, key pages at 390 px too", async ({ browser, request }) => {
  test.setTimeout(120_000);
  // A portal link signs its browser in as the district's manager (lib/portal: a read-only link as support).
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const portal = await context.newPage();
    await portal.goto(link.json.url);
    await expect(portal.getByTestId("portal-marker")).toBeVisible();
    const district = { role: "manager" as const, tenantId: tenant };
    const routes = Object.keys(PAGE_PERMISSIONS).filter((route) => canAs(district, PAGE_PERMISSIONS[route]));
    expect(await walk(portal, "portal", routes)).toEqual([]);
  } finally {
    await context.close();
  }
});
