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

test("every dashboard page, as an admin and as a district's portal, has no serious WCAG 2.1 AA violation at 1280 px, key pages at 390 px too", async ({
  browser,
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const tenant = `a11y_${run}`;
  expect((await api(request, "POST", "/api/v1/tenants", { id: tenant, name: `Alder ${run} Schools` })).status).toBe(201);
  const { ids, subscriptionId } = await seedDetailPages(request, {
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
  const pathOf = (route: string) => route.replace("[id]", ids[route] ?? "");
  const narrow = [`/?q=stu_a${run}`, "/subscriptions", `/subscriptions/${subscriptionId}`, "/dlq"];

  const found: string[] = [];
  async function walk(p: Page, who: string, routes: string[]) {
    await p.setViewportSize({ width: 1280, height: 900 });
    for (const path of [...routes.map(pathOf), `/?q=stu_a${run}`]) {
      await p.goto(path);
      found.push(...(await audit(p, `${who} ${path} @1280`)));
    }
    await p.setViewportSize({ width: 390, height: 844 });
    for (const path of narrow) {
      await p.goto(path);
      found.push(...(await audit(p, `${who} ${path} @390`)));
    }
  }

  await signIn(page, "admin");
  await walk(page, "admin", Object.keys(PAGE_PERMISSIONS));

  // A portal link signs its browser in as the district's manager (lib/portal: a read-only link as support).
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const portal = await context.newPage();
  await portal.goto(link.json.url);
  await expect(portal.getByTestId("portal-marker")).toBeVisible();
  const district = { role: "manager" as const, tenantId: tenant };
  await walk(
    portal,
    "portal",
    Object.keys(PAGE_PERMISSIONS).filter((route) => canAs(district, PAGE_PERMISSIONS[route])),
  );
  await context.close();

  if (found.length) console.log(`axe: ${found.length} serious or critical violations\n${found.join("\n")}`);
  expect(found).toEqual([]);
});
