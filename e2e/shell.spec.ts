import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";

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
