// Navigation by role: each role sees the items it can use (an admin, Admin; a manager, no Redrives; a district's
// manager, no Alerts either), and a page the role may not open answers inside the dashboard's frame with one
// sentence saying why and whom to ask. At 1,280 and 390 px.
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "./helpers";
import { shot } from "./dashboard-seed";
import { createDistrict, signInAsManager, type District } from "./district";

const run = Date.now().toString(36);
let district: District;

test.beforeAll(async () => {
  district = await createDistrict(`navcheck_${run}`, `Nav Check USD ${run}`);
});

const navItems = (page: Page) => page.getByRole("navigation", { name: "Main" }).getByRole("link");

async function bothWidths(page: Page, name: string) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("an admin has an Admin item that opens the admin pages", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "admin");
  await expect(navItems(page)).toHaveText(["Lookup", "Subscriptions", "Dead letters", "Redrives", "Event types", "Alerts", "Notifications", "Audit", "Admin"]);
  await navItems(page).filter({ hasText: "Admin" }).click();
  await expect(page).toHaveURL(/\/admin\/users$/);
  await expect(page.getByRole("heading", { level: 1, name: "Users" })).toBeVisible();
  // Admin stays marked as the current section on every admin page.
  await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "API tokens" }).click();
  await expect(navItems(page).filter({ hasText: "Admin" })).toHaveAttribute("aria-current", "page");
  await bothWidths(page, "roles-admin-nav");
});

test("a manager sees no Redrives; its empty state and the refused redrive page say whom to ask", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "manager");
  await expect(navItems(page)).toHaveText(["Lookup", "Subscriptions", "Dead letters", "Event types", "Alerts", "Notifications", "Audit"]);
  // (403 when the refusal comes before the page streams; the dashboard's loading boundary may have sent 200 first.)
  const res = await page.goto("/dlq/redrive");
  expect([200, 403]).toContain(res?.status());
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Not allowed for your account");
  await expect(page.getByTestId("refused-reason")).toHaveText(
    "Starting a redrive is for engineers and admins, and you are signed in as a manager: ask an engineer or an admin.",
  );
  // Inside the frame: the header, the navigation, the way back.
  await expect(navItems(page).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Back to Lookup" })).toBeVisible();
  await bothWidths(page, "roles-manager-refused-redrive");
});

test("a district's manager sees its district's items only, and each refused page says why", async ({ page }) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signInAsManager(page, district);
  await expect(navItems(page)).toHaveText(["Lookup", "Subscriptions", "Dead letters", "Event types", "Notifications", "Audit"]);
  await bothWidths(page, "roles-district-nav");

  const refused: [string, string][] = [
    ["/alerts", `Reading the alert conditions is for accounts that see every district, and yours sees ${district.name} only: ask a hookledger admin.`],
    ["/dlq/redrive", "Sending many dead letters again at once is for engineers and admins, and you are signed in as a manager: ask an engineer or an admin."],
    ["/admin/users", "Managing the dashboard's users is for admins, and you are signed in as a manager: ask an admin."],
    ["/admin/retention", "Reading the retention policy is for admins, and you are signed in as a manager: ask an admin."],
  ];
  for (const [url, why] of refused) {
    const res = await page.goto(url);
    expect([200, 403], url).toContain(res?.status());
    await expect(page.getByRole("heading", { level: 1 }), url).toHaveText("Not allowed for your account");
    await expect(page.getByTestId("refused-reason"), url).toHaveText(why);
    await expect(page.getByTestId("viewer-tenant"), `${url} is in the district's frame`).toHaveText(district.name);
  }
  await page.goto("/alerts");
  await bothWidths(page, "roles-district-refused-alerts");

  // The batches list (reachable from a batch's links) suggests nothing the manager cannot do.
  await page.goto("/redrives");
  await expect(page.getByText("No batches yet.")).toBeVisible();
  // In the district's words: whom it asks, not which roles start a batch.
  await expect(page.getByTestId("batches-empty")).toHaveText(
    "Nothing has been sent again for your district. If your endpoint missed deliveries, ask the people who run hookledger to have them sent again; the batch shows here.",
  );
  await expect(page.getByRole("link", { name: "New redrive…" })).toHaveCount(0);
  await expect(page.locator("main")).not.toContainText("Start a redrive");
  await bothWidths(page, "roles-district-redrives-empty");
});
