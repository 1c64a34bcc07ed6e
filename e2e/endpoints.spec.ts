// Endpoint management as an integration manager does it, from the dashboard
// alone: create a district's subscription (a refused URL is explained next to
// its field and creates nothing), copy the signing secret shown once, see an
// event delivered, rotate the secret (the district's receiver verifies with
// either secret during the overlap), archive it with a reason, and still find
// its delivery by the student's id. The receiver is a real HTTP server that
// verifies every request with the standardwebhooks package.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { api, signIn, tokenFor } from "./helpers";
import { closeE2eDb, shot } from "./dashboard-seed";

/** The secrets the district has stored: [old, new] after the rotation. */
const districtSecrets: string[] = [];
/** Per event id (the envelope's id), which of the district's secrets verified its delivery (by index). */
const verified = new Map<string, number[]>();
let receiver: http.Server;

test.beforeAll(async () => {
  for (const role of ["producer", "support"] as const) await tokenFor(role);
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      // The line the dashboard gives the district (components/subscriptions/SecretOnce.tsx), each secret on its own: during an overlap both must verify.
      const ok = districtSecrets.flatMap((s, i) => {
        try {
          new Webhook(s).verify(body, req.headers as Record<string, string>);
          return [i];
        } catch {
          return [];
        }
      });
      verified.set(String((JSON.parse(body) as { id?: string }).id), ok);
      res.statusCode = ok.length > 0 ? 204 : 401;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});

test.afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await closeE2eDb();
});

test("a manager creates, keys, re-keys and retires a district's endpoint from the dashboard", async ({ page, context, request }) => {
  test.setTimeout(180_000);
  const run = Date.now().toString(36);
  const port = (receiver.address() as AddressInfo).port;
  const name = `Westfield SIS ${run}`;
  const tenant = `westfield_${run}`;
  const student = `stu_w_${run}`;
  const publish = async (id: string) => {
    const ev = await api(request, "POST", "/api/v1/events", { id, type: "assignment.graded", data: { score: 91 }, subject: { tenant, studentId: student } }, "producer");
    expect(ev.status, JSON.stringify(ev.json)).toBe(202);
    return ev.json as { eventId: string; deliveries: { id: string; subscriptionId: string }[] };
  };
  // The district exists (an admin registers districts); a manager names it.
  const registered = await api(request, "POST", "/api/v1/tenants", { id: tenant, name: `Westfield USD ${run}` });
  expect(registered.status, JSON.stringify(registered.json)).toBe(201);
  // A type producers already publish, so the dialog offers it.
  await publish(`evt_w_seed_${run}`);

  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "manager");
  await page.goto("/subscriptions");
  await page.getByRole("button", { name: "New subscription" }).click();
  const dialog = page.getByRole("dialog", { name: "New subscription" });
  await dialog.getByLabel("Name").fill(name);
  await dialog.getByLabel("Tenant", { exact: true }).fill(tenant);
  // A manager is not offered *.
  await expect(dialog.getByText("every type, also future ones")).toHaveCount(0);
  await dialog.getByRole("checkbox", { name: "assignment.graded", exact: true }).check();
  await expect(dialog.getByText("Empty: the default, 30 s → 2 min → 10 min → 1 h → 6 h → 24 h.")).toBeVisible();

  // The server's URL rule answers, next to the URL field; nothing is created.
  const before = await api(request, "GET", "/api/v1/subscriptions?archived=true", undefined, "support");
  await dialog.getByLabel("Endpoint URL").fill("ftp://sis.westfield.example/hooks");
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  const urlField = dialog.getByLabel("Endpoint URL");
  await expect(urlField).toHaveAttribute("aria-invalid", "true");
  await expect(dialog.getByRole("alert")).toContainText("only http and https targets are allowed");
  await dialog.getByLabel("Max concurrency, requests at once").fill("5000");
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  await expect(dialog.getByLabel("Max concurrency, requests at once")).toHaveAttribute("aria-invalid", "true");
  await shot(page, "endpoints-create-error-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "endpoints-create-error-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  const after = await api(request, "GET", "/api/v1/subscriptions?archived=true", undefined, "support");
  expect(after.json.items).toHaveLength(before.json.items.length);

  await dialog.getByLabel("Max concurrency, requests at once").fill("4");
  await urlField.fill(`http://127.0.0.1:${port}/hooks`);
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  const created = page.getByRole("dialog", { name: `Subscription ${name} created` });
  const secretText = created.getByLabel("Signing secret");
  await expect(secretText).toHaveText(/^whsec_/);
  await expect(created.getByLabel("Verification code")).toContainText("new Webhook(");
  await created.getByRole("button", { name: "Copy secret" }).click();
  await expect(created.getByRole("button", { name: /Copied/ })).toBeVisible();
  const secret = await page.evaluate(() => navigator.clipboard.readText());
  expect(secret).toBe(await secretText.textContent());
  districtSecrets.push(secret);
  await shot(page, "endpoints-secret-once-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "endpoints-secret-once-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  await created.getByRole("link", { name: "Open the subscription" }).click();
  await expect(page.getByRole("heading", { level: 1, name: new RegExp(name) })).toBeVisible();
  const subscriptionId = page.url().split("/subscriptions/")[1];
  // Shown once: the page, its API and its HTML carry no secret.
  expect(await page.content()).not.toContain(secret);

  // An event published through the API is delivered and verified with the secret.
  const first = await publish(`evt_w1_${run}`);
  expect(first.deliveries.map((d) => d.subscriptionId)).toContain(subscriptionId);
  const deliveries = page.getByTestId("deliveries-list");
  await expect(deliveries.getByRole("listitem").filter({ hasText: `evt_w1_${run}` })).toContainText("delivered", { timeout: 30_000 });
  expect(verified.get(`evt_w1_${run}`)).toEqual([0]);

  // Rotate with the default overlap of a day: the new secret is shown once.
  await page.getByRole("button", { name: "Rotate signing secret…" }).click();
  const rotate = page.getByRole("form", { name: "Rotate signing secret" });
  await expect(rotate.getByLabel("Overlap: the old secret keeps signing for")).toHaveValue("86400");
  await rotate.getByRole("button", { name: "Rotate now" }).click();
  const fresh = page.getByTestId("secret-once");
  await fresh.getByRole("button", { name: "Copy secret" }).click();
  await expect(fresh.getByRole("button", { name: /Copied/ })).toBeVisible();
  const secret2 = await page.evaluate(() => navigator.clipboard.readText());
  expect(secret2).toMatch(/^whsec_/);
  expect(secret2).not.toBe(secret);
  districtSecrets.push(secret2);
  const secrets = page.getByTestId("secrets-list").getByRole("listitem");
  await expect(secrets).toHaveCount(2);
  await expect(secrets.nth(0)).toContainText("signing");
  await expect(secrets.nth(1)).toContainText("signing during the overlap");
  await expect(secrets.nth(1)).toContainText("expires");
  await expect(page.getByTestId("secrets-list")).not.toContainText("whsec_");
  await shot(page, "endpoints-rotated-1280");
  await page.getByRole("button", { name: "I have stored it" }).click();
  await expect(page.getByTestId("secret-once")).toHaveCount(0);

  // During the overlap each delivery verifies with either secret.
  const second = await publish(`evt_w2_${run}`);
  expect(second.deliveries.map((d) => d.subscriptionId)).toContain(subscriptionId);
  await expect(deliveries.getByRole("listitem").filter({ hasText: `evt_w2_${run}` })).toContainText("delivered", { timeout: 30_000 });
  expect(verified.get(`evt_w2_${run}`)).toEqual([0, 1]);

  // Edit: a refused save shows the API's message by the field and changes nothing; a good one saves.
  const config = page.getByRole("region", { name: "Configuration" });
  await config.getByRole("button", { name: "Edit" }).click();
  const edit = page.getByRole("form", { name: "Edit configuration" });
  await edit.getByLabel("Max concurrency, requests at once").fill("0");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit.getByLabel("Max concurrency, requests at once")).toHaveAttribute("aria-invalid", "true");
  await expect(edit.getByRole("alert")).toContainText(/>=1/);
  const unchanged = await api(request, "GET", `/api/v1/subscriptions/${subscriptionId}`, undefined, "support");
  expect(unchanged.json.maxConcurrency).toBe(4);
  await edit.getByLabel("Max concurrency, requests at once").fill("3");
  await edit.getByLabel("Name").fill(`${name} (district)`);
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(config).toContainText(`${name} (district)`);
  const saved = await api(request, "GET", `/api/v1/subscriptions/${subscriptionId}`, undefined, "support");
  expect(saved.json).toMatchObject({ maxConcurrency: 3, name: `${name} (district)`, eventTypes: ["assignment.graded"] });
  await edit.getByLabel("Name").waitFor({ state: "detached" });
  await config.getByRole("button", { name: "Edit" }).click();
  await edit.getByLabel("Name").fill(name);
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(config.getByRole("button", { name: "Edit" })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1 })).not.toContainText("(district)");

  // Archive with a reason: it leaves the default list; nothing is deleted.
  await page.getByRole("button", { name: "Archive…" }).click();
  const archive = page.getByRole("dialog", { name: `Archive ${name}` });
  const confirm = archive.getByRole("button", { name: "Archive subscription" });
  await expect(confirm).toBeDisabled();
  await archive.getByRole("textbox", { name: /Reason/ }).fill("Westfield decommissioned its SIS, INC-2240");
  await shot(page, "endpoints-archive-dialog-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "endpoints-archive-dialog-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  await confirm.click();
  await expect(page.getByTestId("archived-note")).toContainText("Westfield decommissioned its SIS, INC-2240");
  await expect(page.getByRole("button", { name: "Unarchive…" })).toBeVisible();
  await shot(page, "endpoints-archived-1280");

  await page.goto("/subscriptions");
  await expect(page.getByRole("heading", { name: "Subscriptions" })).toBeVisible();
  await expect(page.getByRole("link", { name })).toHaveCount(0);
  await page.getByRole("checkbox", { name: "Show archived" }).check();
  const row = page.getByRole("row").filter({ has: page.getByRole("link", { name }) });
  await expect(row).toContainText("archived");
  await shot(page, "endpoints-list-archived-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "endpoints-list-archived-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  // A new event no longer reaches it; the lookup by the student id still finds its deliveries.
  const third = await publish(`evt_w3_${run}`);
  expect(third.deliveries.map((d) => d.subscriptionId)).not.toContain(subscriptionId);
  await page.goto("/");
  await page.getByRole("searchbox", { name: "Search deliveries" }).fill(student);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("delivery-result").filter({ hasText: name }).first()).toBeVisible();
  await expect(page.getByTestId("delivery-result").filter({ hasText: name })).toHaveCount(2);
  await shot(page, "endpoints-lookup-1280");
});
