import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";
import { shot } from "./dashboard-seed";

test("the dashboard shell loads and lists subscriptions created through the API", async ({ page, request }) => {
  const name = `Lincoln USD ${Date.now()}`;
  const created = await api(request, "POST", "/api/v1/subscriptions", {
    name,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: "lincoln",
  });
  expect(created.status).toBe(201);

  await signIn(page, "support");
  await page.goto("/subscriptions");
  await expect(page.getByRole("heading", { name: "Subscriptions" })).toBeVisible();
  await expect(page.getByRole("link", { name })).toBeVisible();
  await expect(page.getByText(created.json.id)).toBeVisible();
});

test("an admin creates an API token; the audit log filtered by its target type lists it", async ({ page }) => {
  const name = `audit-probe-${Date.now()}`;
  await signIn(page, "admin", { next: "/admin/tokens" });
  await expect(page.getByRole("heading", { name: "API tokens" })).toBeVisible();
  await page.getByLabel("Name (shown in audit rows)").fill(name);
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByRole("status")).toContainText(`Token "${name}"`);

  // Rows are written with target type api_token: the filter offers exactly that.
  await page.goto("/audit");
  await page.getByLabel("Target type").selectOption("api_token");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/targetType=api_token/);
  const row = page.getByRole("row").filter({ hasText: name });
  await expect(row).toContainText("API token created");
  await expect(row).toContainText("token.create");
  await shot(page, "audit-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(row).toBeVisible();
  await shot(page, "audit-390");
});

test("an address no page answers shows hookledger's not-found page with a way back, and the browser refuses none of its scripts", async ({ page }) => {
  const refused: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/.test(m.text())) refused.push(m.text());
  });
  await signIn(page, "support");
  // A natural guess at a list of deliveries (there is none: deliveries are found by lookup or on a subscription).
  const res = await page.goto("/deliveries");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1, name: "Not found" })).toBeVisible();
  await page.getByRole("link", { name: "Search from the lookup page" }).click();
  await expect(page).toHaveURL(/\/$/);
  expect(refused).toEqual([]);
});
