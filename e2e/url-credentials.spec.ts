// A district endpoint that takes its credential in the URL (an Azure
// Function's ?code=): support reads the subscription page and the lookup with
// the value as ****, nowhere in the page's HTML either; an admin's edit form
// holds the stored URL masked until Show, and a save of another field keeps
// the stored URL. Screens at 1,280 and 390 px.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { api, signIn } from "./helpers";
import { shot } from "./dashboard-seed";

test.setTimeout(180_000);

const CODE = `fnkey${randomBytes(12).toString("hex")}`;
let server: http.Server;
let stored: string;
let masked: string;

test.beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/lincoln-hook`;
  stored = `${base}?code=${CODE}&district=lincoln`;
  masked = `${base}?code=****&district=lincoln`;
});
test.afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

async function shots(page: Page, name: string) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("support sees the URL's code as ****; an admin's edit form shows it on Show and a rename keeps it", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const name = `Lincoln Azure function ${run}`;
  const id = `sub_fn_${run}`;
  const created = await api(request, "POST", "/api/v1/subscriptions", { id, name, url: stored, eventTypes: [`fn.graded_${run}`] });
  expect(created.status).toBe(201);

  await signIn(page, "support");
  await page.goto(`/subscriptions/${id}`);
  await expect(page.getByRole("heading", { name })).toBeVisible();
  const config = page.getByRole("region", { name: "Configuration" });
  await expect(config).toContainText(masked);
  // Not in the text, nor in the HTML's data for hydration.
  expect(await page.content()).not.toContain(CODE);
  await config.scrollIntoViewIfNeeded();
  await shots(page, "url-credentials-support");

  await page.goto(`/?q=${encodeURIComponent(id)}`);
  await expect(page.getByText("Matching subscriptions:")).toBeVisible();
  await expect(page.getByRole("link", { name })).toBeVisible();
  const answer = await request.get(`/api/v1/dashboard/lookup?q=${encodeURIComponent(id)}`, {
    headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ") },
  });
  expect(answer.status()).toBe(200);
  const found = (await answer.json()) as { subscriptions: { id: string; url: string }[] };
  expect(found.subscriptions.map((s) => s.url)).toEqual([masked]);
  expect(await page.content()).not.toContain(CODE);

  await page.context().clearCookies();
  await signIn(page, "admin");
  await page.goto(`/subscriptions/${id}`);
  await expect(config).toContainText(masked);
  await expect(config).not.toContainText(CODE);
  await config.getByRole("button", { name: "Edit" }).click();
  const edit = page.getByRole("form", { name: "Edit configuration" });
  const url = edit.getByRole("textbox", { name: /Endpoint URL/ });
  await expect(url).toHaveValue(masked);
  await expect(url).toHaveAttribute("readonly", "");
  await edit.scrollIntoViewIfNeeded();
  await shots(page, "url-credentials-admin-form");
  await edit.getByRole("button", { name: "Show" }).click();
  await expect(url).toHaveValue(stored);
  await expect(url).toBeEditable();
  await expect(edit.getByRole("button", { name: "Hide" })).toHaveAttribute("aria-pressed", "true");
  await shots(page, "url-credentials-admin-shown");

  // A rename leaves the URL alone: the stored one, credential and all.
  await edit.getByRole("button", { name: "Hide" }).click();
  await edit.getByLabel("Name").fill(`${name} (renamed)`);
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(config).toContainText(`${name} (renamed)`);
  await expect(config).toContainText("Saved: name.");
  const after = await api(request, "GET", `/api/v1/subscriptions/${id}`);
  expect(after.json.url).toBe(stored);
  const asSupport = await api(request, "GET", `/api/v1/subscriptions/${id}`, undefined, "support");
  expect(asSupport.json.url).toBe(masked);
});
