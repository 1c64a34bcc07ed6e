import { expect, test } from "@playwright/test";
import { api, csrfHeader, signIn } from "./helpers";

// Each new role's user is created through the real CLI (a few seconds on a busy box).
test.describe.configure({ timeout: 150_000 });

test("an unauthenticated visit redirects to the sign-in page", async ({ page }) => {
  await page.goto("/subscriptions");
  await expect(page).toHaveURL(/\/signin\?next=%2Fsubscriptions$/);
  await expect(page.getByRole("heading", { name: "Sign in to hookledger" })).toBeVisible();
  await expect(page.getByLabel("Email")).toBeVisible();
});

test("the API without credentials answers 401, and security headers are set", async ({ request }) => {
  const r = await request.get("/api/v1/subscriptions");
  expect(r.status()).toBe(401);
  const page = await request.get("/signin");
  const h = page.headers();
  expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["referrer-policy"]).toBe("same-origin");
});

test("a wrong password shows a clear message and stays on the sign-in page", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill("nobody@example.test");
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "do not match" })).toBeVisible();
  await expect(page).toHaveURL(/\/signin/);
});

test("a support user sees no pause/redrive controls, and the API refuses the same actions with 403 through the session", async ({ page, request }) => {
  const created = await api(request, "POST", "/api/v1/subscriptions", {
    name: `Auth district ${Date.now()}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: "auth-e2e",
  });
  expect(created.status).toBe(201);
  const id = created.json.id as string;

  await signIn(page, "support", { next: "/subscriptions" });
  await expect(page).toHaveURL(/\/subscriptions$/);
  await expect(page.getByText(id)).toBeVisible();
  await page.goto(`/subscriptions/${id}`);
  for (const name of [/pause/i, /resume/i, /redrive/i, /rotate/i])
    await expect(page.getByRole("button", { name })).toHaveCount(0);

  // The same session, with a valid CSRF header: the server still refuses, by role.
  const headers = { "content-type": "application/json", ...(await csrfHeader(page)) };
  const pause = await page.request.patch(`/api/v1/subscriptions/${id}`, { headers, data: { state: "paused", reason: "e2e" } });
  expect(pause.status()).toBe(403);
  expect((await pause.json()).error.message).toContain("support role may not subscriptions.update");
  const read = await page.request.get(`/api/v1/subscriptions/${id}`);
  expect(read.status()).toBe(200);
  expect(JSON.stringify(await read.json())).not.toContain("whsec_");
});

test("a manager's session mutation needs the CSRF header: without it 403, with it 200", async ({ page }) => {
  const created = await api(page.request, "POST", "/api/v1/subscriptions", {
    name: `CSRF district ${Date.now()}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: "csrf-e2e",
  });
  const id = created.json.id as string;
  await signIn(page, "manager");
  const bare = await page.request.patch(`/api/v1/subscriptions/${id}`, { headers: { "content-type": "application/json" }, data: { state: "paused" } });
  expect(bare.status()).toBe(403);
  const ok = await page.request.patch(`/api/v1/subscriptions/${id}`, {
    headers: { "content-type": "application/json", ...(await csrfHeader(page)) },
    data: { state: "paused", reason: "maintenance" },
  });
  expect(ok.status(), await ok.text()).toBe(200);
});

test("signing out ends the session", async ({ page }) => {
  await signIn(page, "engineer");
  const res = await page.request.post("/api/auth/signout", { headers: await csrfHeader(page) });
  expect(res.status()).toBe(200);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
});

test("an admin adds a user on /admin/users and gets a one-time password; a support user gets the 403 page there", async ({ page, browser }) => {
  await signIn(page, "admin", { next: "/admin/users" });
  await expect(page.getByRole("heading", { name: "Users" })).toBeVisible();
  const email = `added-${Date.now()}@example.test`;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("status")).toContainText(`One-time password for ${email}`);
  await expect(page.getByRole("cell", { name: email })).toBeVisible();

  const other = await browser.newPage();
  await signIn(other, "support");
  await other.goto("/admin/users");
  // forbidden(): Next's 403 page (the status is 200 once the dashboard layout has started streaming).
  await expect(other.getByText("This page could not be accessed.")).toBeVisible();
  await expect(other.getByRole("button", { name: "Create user" })).toHaveCount(0);
  await other.close();
});
