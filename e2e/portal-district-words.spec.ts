// What a district sees in its portal on the pages it reaches by a link or its address rather than the navigation:
// the Audit page's filters offer what its own trail can hold (not the event catalog's, retention's or the notification
// defaults' actions, recorded for the whole service), and an action it can never have, typed into the address, is an
// empty list with the reason; the Redrives page speaks of the people who run hookledger, not of engineers it has never
// met; adding an endpoint and rotating its secret say what its own endpoint does with the secret, and its name is
// under "District", not "Tenant". Screens at 1,280 and 390 px.
import { expect, test, type Browser, type APIRequestContext, type Page } from "@playwright/test";
import { api, cli } from "./helpers";
import { closeE2eDb, shot } from "./dashboard-seed";

const run = Date.now().toString(36);
const D = { id: `pdw_${run}`, name: `Garfield USD ${run}`, sub: `sub_pdw_${run}` };

test.beforeAll(async ({ request }) => {
  // Each writes a row of the district's own trail: tenant.create, subscription.create (and portal.session.create per link).
  await cli(["tenant", "create", "--id", D.id, "--name", D.name]);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: D.sub,
    name: `Garfield SIS ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: ["assignment.graded"],
    tenant: D.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
});

test.afterAll(async () => {
  await closeE2eDb();
});

/** A browser signed in through a fresh portal link for the district (minted with an admin's token). */
async function portal(browser: Browser, request: APIRequestContext, width = 1280): Promise<Page> {
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant: D.id, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(link.json.url);
  await expect(page.getByTestId("portal-marker")).toBeVisible();
  return page;
}

/** The values a filter's select offers (its name is its label and the chosen option's text, hence the prefix). */
async function optionValues(page: Page, label: string): Promise<string[]> {
  const select = page.getByRole("form", { name: "Filter the audit log" }).getByRole("combobox", { name: new RegExp(`^${label}`) });
  // evaluateAll does not wait for the page: the select's being there does.
  await expect(select).toBeVisible();
  const values = await select.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
  expect(values.length, `${label}'s options`).toBeGreaterThan(3);
  return values;
}

test("the Audit page offers a district the actions its trail holds, and explains one it can never have", async ({ browser, request }) => {
  const page = await portal(browser, request);
  await page.goto("/audit");
  // The page speaks of the district's own trail, not of operators.
  await expect(page.getByText(`Who changed what for ${D.name}: its endpoints, secrets, accounts, links and redrives, newest first.`, { exact: false })).toBeVisible();
  await expect(page.getByText(/operator/i)).toHaveCount(0);
  await expect(page.getByRole("heading", { name: `Notifications to ${D.name}` })).toBeVisible();
  const actions = await optionValues(page, "Action");
  for (const never of ["event_type.create", "event_type.update", "retention.run", "notifications.settings.update"]) expect(actions).not.toContain(never);
  // Its own administration is in its trail: the district registered, its endpoint, this portal link.
  expect(actions).toEqual(expect.arrayContaining(["tenant.create", "subscription.create", "portal.session.create", "user.create", "token.create"]));
  expect(await optionValues(page, "Target type")).not.toEqual(expect.arrayContaining(["event_type"]));
  const rows = page.getByTestId("audit-row");
  await expect(rows.filter({ hasText: "tenant.create" })).toHaveCount(1);
  await expect(rows.filter({ hasText: "portal.session.create" }).first()).toBeVisible();

  // Chosen from the list: that action's rows only.
  await page
    .getByRole("form", { name: "Filter the audit log" })
    .getByRole("combobox", { name: /^Action/ })
    .selectOption("tenant.create");
  await page.getByRole("button", { name: "Filter", exact: true }).click();
  await expect(page).toHaveURL(/action=tenant\.create/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(D.id);

  // Typed into the address: an empty list that says why, not an error; the form shows what the list is filtered by.
  await page.goto("/audit?action=event_type.create");
  await expect(page.getByText(`Nothing in ${D.name}'s audit trail matches these filters.`)).toBeVisible();
  await expect(page.getByTestId("audit-never")).toHaveText(
    `“event type catalogued” is never in ${D.name}'s audit trail: it changes what every district shares, and is recorded for the whole service only.`,
  );
  await expect(page.getByRole("form", { name: "Filter the audit log" }).getByRole("combobox", { name: /^Action/ })).toHaveValue("event_type.create");
  await expect(rows).toHaveCount(0);
  await shot(page, "portal-audit-never-1280");
  await page.goto("/audit?targetType=settings");
  await expect(page.getByTestId("audit-never")).toHaveText(
    `Nothing in ${D.name}'s audit trail has the target type “settings”: it changes what every district shares, and is recorded for the whole service only.`,
  );
  await page.goto("/audit?action=no.such_action");
  await expect(page.getByTestId("audit-never")).toContainText("hookledger writes no action called “no.such_action”");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/audit?action=retention.run");
  await expect(page.getByTestId("audit-never")).toContainText("never in");
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-audit-never-390");
  await page.context().close();
});

test("a district that opens /redrives by its address reads about its own deliveries, in its own words", async ({ browser, request }) => {
  const page = await portal(browser, request);
  await page.goto("/redrives");
  await expect(page.getByRole("heading", { name: "Redrives", level: 1 })).toBeVisible();
  await expect(page.locator("main")).not.toContainText(/engineer|admin/i);
  await expect(page.getByTestId("batches-empty")).toHaveText(
    "Nothing has been sent again for your district. If your endpoint missed deliveries, ask whoever sent you the portal link to have them sent again; the batch shows here.",
  );
  await expect(page.getByRole("link", { name: "New redrive…" })).toHaveCount(0);
  await shot(page, "portal-redrives-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("batches-empty")).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-redrives-390");
  await page.context().close();
});

test("a district adding an endpoint and rotating its secret is told what its own endpoint does, not what 'the district' or a tenant does", async ({
  browser,
  request,
}) => {
  const page = await portal(browser, request);
  await page.goto("/subscriptions");
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveAttribute("placeholder", "Name, id or URL");
  await page.getByRole("button", { name: "New subscription" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByTestId("fixed-tenant")).toHaveText(`District${D.name} ${D.id}`);
  await dialog.getByLabel("Name", { exact: true }).fill(`Garfield LMS ${run}`);
  await dialog.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/lms");
  await dialog.getByLabel("Other types, not listed above (comma-separated)").fill("assignment.graded");
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  const once = dialog.getByTestId("secret-once");
  await expect(once).toContainText("Keep it where your endpoint reads it (WEBHOOK_SECRET below), and nowhere else");
  await expect(once).toContainText("Your endpoint verifies each delivery with the standardwebhooks package");
  await expect(dialog).not.toContainText(/the district|tenant/i);
  await shot(page, "portal-created-secret-1280");

  await dialog.getByRole("link", { name: "Open the subscription" }).click();
  await expect(page.getByRole("heading", { name: `Garfield LMS ${run}` })).toBeVisible();
  const config = page.getByRole("region", { name: "Configuration" });
  await expect(config).toContainText(`District${D.name}`);
  await expect(config).not.toContainText(/tenant/i);
  await page.getByRole("button", { name: "Rotate signing secret…" }).click();
  const rotate = page.getByRole("form", { name: "Rotate signing secret" });
  await expect(rotate).toContainText("so your endpoint can switch to the new one at your own pace.");
  await rotate.getByRole("button", { name: "Rotate now" }).click();
  await expect(page.getByTestId("secret-once")).toContainText("Your endpoint verifies each delivery");
  await expect(page.getByRole("region", { name: "Signing secrets" })).not.toContainText(/the district/i);

  // A delivery's summary names the district by its name, under its word.
  const published = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: `evt_pdw_${run}`, type: "assignment.graded", data: { score: 70 }, subject: { tenant: D.id, studentId: `stu_pdw_${run}` } },
    "producer",
  );
  expect(published.status, JSON.stringify(published.json)).toBe(202);
  const delivery = (published.json.deliveries as { id: string; subscriptionId: string }[]).find((d) => d.subscriptionId === D.sub)!;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/deliveries/${delivery.id}`);
  const summary = page.getByRole("region", { name: "Summary" });
  await expect(summary).toContainText(`District${D.name}`);
  await expect(summary).not.toContainText(/tenant/i);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-delivery-summary-390");
  await page.context().close();
});
