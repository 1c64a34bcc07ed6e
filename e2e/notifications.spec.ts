// A district's manager sets whom to tell on its Notifications page; its
// endpoint then answers 503 until the e2e server's own worker pauses it for
// failing, and the notice arrives as an e-mail on a local SMTP server (the
// server is started with HOOKLEDGER_SMTP_URL naming E2E_SMTP_PORT:
// playwright.config.ts); the audit page and the Notifications page show it as
// sent. A global admin narrows the notices to one district. Screens at 1,280
// and 390 px.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";
import { createDistrict, signInAsManager } from "./district";
import { closeE2eDb, e2eDb, shot } from "./dashboard-seed";
import { E2E_SMTP_PORT } from "../playwright.config";

let smtp: SMTPServer;
/** Each message as received: its recipients and its head and body, header lines unfolded. */
const mails: { to: string[]; raw: string }[] = [];
let receiver: http.Server;

test.beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        // Header lines unfolded; the quoted-printable body's soft breaks and escapes undone (the links and words read whole).
        const raw = Buffer.concat(chunks)
          .toString("latin1")
          .replace(/\r\n(?=[ \t])/g, "")
          .replace(/=\r\n/g, "")
          .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.from(raw, "latin1").toString("utf8") });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(E2E_SMTP_PORT, "127.0.0.1", () => r()));
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = 503;
      res.end("maintenance");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});

test.afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await new Promise<void>((r) => smtp.close(() => r()));
  await closeE2eDb();
});

test("a district's contact set on its page gets an e-mail when its endpoint is paused for failing; the audit page shows it sent", async ({ page, request, baseURL }) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const district = await createDistrict(`ntf_${run}`, `Lincoln USD ${run}`);
  const contact = `it-${run}@lincoln.example`;
  const id = `sub_ntf_${run}`;
  const port = (receiver.address() as AddressInfo).port;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Lincoln gradebook ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: district.id,
    retryPolicy: { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 },
    maxConcurrency: 1,
    failurePolicy: { windowSeconds: 60, minAttempts: 3, probeIntervalSeconds: 10 },
  });
  expect(sub.status).toBe(201);
  // A two-second window, below the API's minute, so the test does not wait a minute.
  await e2eDb().query("UPDATE subscriptions SET failure_window_seconds = 2, probe_interval_seconds = 2 WHERE id = $1", [id]);

  await signInAsManager(page, district);
  await page.goto("/notifications");
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  const form = page.getByRole("form", { name: `Notification contacts of ${district.name}` });
  // A malformed address is refused with the field named, and nothing is saved.
  await form.getByLabel("E-mail addresses").fill("not an address");
  await form.getByRole("button", { name: "Save contacts" }).click();
  // Named as the person typed it: the first address, whole (a space in it does not make it three).
  await expect(form.getByRole("alert")).toContainText("address 1 (“not an address”)");
  await expect(form.getByRole("alert")).not.toContainText("address 2");
  expect((await e2eDb().query("SELECT count(*)::int AS n FROM tenant_contacts WHERE tenant = $1", [district.id])).rows[0].n).toBe(0);
  await form.getByLabel("E-mail addresses").fill(contact);
  // The refusal spoke of the old address: editing it takes the refusal away.
  await expect(form.getByRole("alert")).toHaveCount(0);
  // The district's own dead-letter threshold: out of range is refused by name; 5 is kept.
  const threshold = form.getByLabel("Dead letters before you are told");
  await expect(threshold).toHaveAttribute("placeholder", /^\d+$/);
  await threshold.fill("0");
  await form.evaluate((f) => ((f as HTMLFormElement).noValidate = true)); // past the browser's own check, to the server's
  await form.getByRole("button", { name: "Save contacts" }).click();
  await expect(form.getByRole("alert")).toContainText("dlqThreshold");
  await threshold.fill("5");
  await form.getByRole("button", { name: "Save contacts" }).click();
  await expect(form.getByRole("status")).toHaveText("Saved: 1 address; told at 5 dead letters.");
  expect((await e2eDb().query("SELECT dlq_threshold FROM tenant_contacts WHERE tenant = $1", [district.id])).rows[0].dlq_threshold).toBe(5);
  await page.reload();
  await expect(page.getByRole("form", { name: `Notification contacts of ${district.name}` }).getByLabel("Dead letters before you are told")).toHaveValue("5");

  for (let i = 0; i < 3; i++) {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_ntf_${run}_${i}`, type: "assignment.graded", data: { i }, subject: { tenant: district.id } },
      "producer",
    );
    expect(r.status).toBe(202);
  }
  await expect.poll(async () => (await api(request, "GET", `/api/v1/subscriptions/${id}`)).json.pausedReason, { timeout: 30_000 }).toBe("failing");

  // The worker's notifier turns the pause into a notice and sends it within seconds.
  await expect.poll(() => mails.filter((m) => m.to.includes(contact)).length, { timeout: 45_000 }).toBe(1);
  const mail = mails.find((m) => m.to.includes(contact))!.raw;
  expect(mail).toMatch(
    new RegExp(`^Subject: Lincoln USD ${run}: your endpoint http://127\\.0\\.0\\.1:${port}/hooks is paused after failing since \\d\\d:\\d\\d UTC`, "m"),
  );
  // The server links to itself on the port it was started on (playwright.config.ts: E2E_PORT), which baseURL names.
  expect(mail).toContain(`Open it: ${baseURL}/subscriptions/${id}`);
  expect(mail).toContain("answered HTTP 503 “maintenance”");

  await page.goto("/audit");
  const section = page.getByRole("region", { name: `Notifications to ${district.name}` });
  const row = section.getByTestId("notification-row").filter({ hasText: contact });
  await expect(row).toBeVisible();
  await expect(row.getByTestId("notification-status")).toHaveText("sent");
  await expect(row).toContainText("paused for failing");
  await section.scrollIntoViewIfNeeded();
  await shot(page, "notifications-audit-1280");
  await page.goto("/notifications");
  await expect(page.getByTestId("notification-row").filter({ hasText: contact })).toBeVisible();
  await shot(page, "notifications-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("notification-row").filter({ hasText: contact })).toBeVisible();
  await shot(page, "notifications-390");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.goto("/audit");
  await page.getByRole("region", { name: `Notifications to ${district.name}` }).scrollIntoViewIfNeeded();
  await shot(page, "notifications-audit-390");
});

test("a district without contacts is not told, and its Notifications page says so: not sent, to nobody, and where to add an address", async ({
  page,
  request,
  browser,
}) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const district = await createDistrict(`ntfn_${run}`, `Garfield USD ${run}`);
  const id = `sub_ntfn_${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Garfield gradebook ${run}`,
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: district.id,
    retryPolicy: { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 },
    maxConcurrency: 1,
    failurePolicy: { windowSeconds: 60, minAttempts: 3, probeIntervalSeconds: 10 },
  });
  expect(sub.status).toBe(201);
  await e2eDb().query("UPDATE subscriptions SET failure_window_seconds = 2, probe_interval_seconds = 2 WHERE id = $1", [id]);
  for (let i = 0; i < 3; i++) {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_ntfn_${run}_${i}`, type: "assignment.graded", data: { i }, subject: { tenant: district.id } },
      "producer",
    );
    expect(r.status).toBe(202);
  }
  await expect.poll(async () => (await api(request, "GET", `/api/v1/subscriptions/${id}`)).json.pausedReason, { timeout: 30_000 }).toBe("failing");

  await signInAsManager(page, district);
  await page.goto("/notifications");
  const row = page.getByTestId("notification-row").filter({ hasText: "paused for failing" });
  await expect(async () => {
    await page.reload();
    await expect(row).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 45_000 });
  await expect(row).toContainText("nobody: no contacts were set");
  await expect(row.getByTestId("notification-status")).toHaveText("not sent");
  await expect(row).toContainText("Add an address above to be told next time.");
  await expect(row).toContainText(`Garfield USD ${run}: your endpoint`);
  await shot(page, "notifications-unaddressed-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(row).toBeVisible();
  await shot(page, "notifications-unaddressed-390");
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  expect(mails.filter((m) => m.raw.includes(`Garfield USD ${run}`))).toEqual([]);

  // An admin reads the same, told where contacts are set.
  const ctx = await browser.newContext();
  const admin = await ctx.newPage();
  await signIn(admin, "admin");
  await admin.goto(`/notifications?tenant=${district.id}`);
  const adminRow = admin.getByTestId("notification-row").filter({ hasText: "paused for failing" });
  await expect(adminRow.getByTestId("notification-status")).toHaveText("not sent");
  await expect(adminRow).toContainText("Contacts are set on Admin → Tenants.");
  await ctx.close();
});

test("an admin sets a district's contacts on the tenants page", async ({ page }) => {
  const run = Date.now().toString(36);
  const district = await createDistrict(`ntfa_${run}`, `Jefferson County ${run}`);
  await signIn(page, "admin");
  await page.goto("/admin/tenants");
  const item = page.getByTestId("tenant-contacts").filter({ hasText: district.name });
  await expect(item).toContainText("nobody is told");
  await item.locator("summary").click();
  const form = item.getByRole("form", { name: `Notification contacts of ${district.name}` });
  await form.getByLabel("E-mail addresses").fill(`it-${run}@jefferson.example\nops-${run}@jefferson.example`);
  await form.getByRole("button", { name: "Save contacts" }).click();
  await expect(form.getByRole("status")).toHaveText(/^Saved: 2 addresses; told at \d+ dead letters \(the default\)\.$/);
  const { rows } = await e2eDb().query("SELECT emails FROM tenant_contacts WHERE tenant = $1", [district.id]);
  expect(rows).toEqual([{ emails: [`it-${run}@jefferson.example`, `ops-${run}@jefferson.example`] }]);

  // The default every district without its own follows: changed here, audited, shown in the districts' forms.
  const before = (await e2eDb().query("SELECT dlq_threshold FROM ops_settings")).rows[0].dlq_threshold as number;
  const defaults = page.getByRole("form", { name: "Default dead-letter threshold" });
  await defaults.getByLabel("Default dead-letter threshold").fill(String(before + 7));
  await defaults.getByRole("button", { name: "Save default" }).click();
  await expect(defaults.getByRole("status")).toHaveText(`Saved: districts without their own are told at ${before + 7}.`);
  await expect(form.getByText(`Empty: the default, ${before + 7}.`)).toBeVisible();
  const audit = await e2eDb().query("SELECT details FROM audit_entries WHERE action = 'notifications.settings.update' ORDER BY id DESC LIMIT 1");
  expect(audit.rows).toEqual([{ details: { dlqThreshold: { from: before, to: before + 7 } } }]);
  await defaults.getByLabel("Default dead-letter threshold").fill(String(before));
  await defaults.getByRole("button", { name: "Save default" }).click();
  await expect(defaults.getByRole("status")).toHaveText(`Saved: districts without their own are told at ${before}.`);
  await item.scrollIntoViewIfNeeded();
  await shot(page, "notifications-admin-tenants-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await item.scrollIntoViewIfNeeded();
  await shot(page, "notifications-admin-tenants-390");
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
});

test("a district's notices page back, 100 at a time, through one notifier round's instant", async ({ page }) => {
  const run = Date.now().toString(36);
  const district = await createDistrict(`ntfp_${run}`, `Paging Valley ${run}`);
  // 130 notices written in one instant, as one round of the notifier writes them.
  await e2eDb().query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, sent_at, created_at)
     SELECT hl_new_id('ntf_'), $1, NULL, 'dlq_threshold', 'email', 'it@paging.example', 'notice ' || i, 'body', 'e2e-paging:' || $1 || ':' || i, 'sent', 1, now(), now()
       FROM generate_series(1, 130) i`,
    [district.id],
  );
  await signInAsManager(page, district);
  await page.goto("/notifications");
  const rows = page.getByTestId("notification-row");
  await expect(rows).toHaveCount(100);
  await page.getByRole("link", { name: "Older notices →" }).click();
  await expect(rows).toHaveCount(30);
  await expect(page.getByRole("link", { name: "Older notices →" })).toHaveCount(0);
  await page.getByRole("link", { name: "Newest" }).click();
  await expect(rows).toHaveCount(100);
  // A cursor that names nothing this district may see: the newest page, and a line saying so.
  await page.goto("/notifications?cursor=ntf_nothing_here");
  await expect(page.getByRole("status").filter({ hasText: "the newest notices are shown" })).toBeVisible();
  await expect(rows).toHaveCount(100);
});

test("a global admin narrows the notices to one district, typed with suggestions; the filter holds across pages", async ({ page }) => {
  const run = Date.now().toString(36);
  const a = await createDistrict(`ntft_${run}`, `Adams Twelve ${run}`);
  const b = await createDistrict(`ntfu_${run}`, `Bell Unified ${run}`);
  const seed = (tenant: string, n: number) =>
    e2eDb().query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, sent_at, created_at)
       SELECT hl_new_id('ntf_'), $1, NULL, 'dlq_threshold', 'email', 'it@' || $1 || '.example', 'notice ' || i, 'body', 'e2e-tenant:' || $1 || ':' || i, 'sent', 1, now(), now()
         FROM generate_series(1, $2::int) i`,
      [tenant, n],
    );
  await seed(a.id, 104);
  await seed(b.id, 3);
  await signIn(page, "admin");
  await page.goto("/notifications");
  const form = page.getByRole("form", { name: "Filter notifications" });
  const field = form.getByLabel("Tenant");
  await field.fill(a.id.slice(0, -2));
  // The suggestions are the tenants list's, as on every tenant field.
  await expect(form.getByTestId("tenant-suggestions").locator(`option[value="${a.id}"]`)).toHaveCount(1);
  await field.fill(a.id);
  await form.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(new RegExp(`/notifications\\?tenant=${a.id}$`));
  const rows = page.getByTestId("notification-row");
  await expect(rows).toHaveCount(100);
  await expect(page.getByTestId("notification-tenant").filter({ hasNotText: a.name })).toHaveCount(0);
  await expect(field).toHaveValue(a.id);
  await shot(page, "notifications-tenant-filter-1280");
  await page.getByRole("link", { name: "Older notices →" }).click();
  await expect(rows).toHaveCount(4);
  await expect(page.getByTestId("notification-tenant").filter({ hasNotText: a.name })).toHaveCount(0);
  await page.getByRole("link", { name: "Newest" }).click();
  await expect(page).toHaveURL(new RegExp(`/notifications\\?tenant=${a.id}$`));
  await expect(rows).toHaveCount(100);

  await page.goto(`/notifications?tenant=${b.id}`);
  await expect(rows).toHaveCount(3);
  await expect(page.getByTestId("notification-tenant")).toHaveText([b.name, b.name, b.name]);
  await page.goto(`/notifications?tenant=nobody_${run}`);
  await expect(rows).toHaveCount(0);
  await expect(page.getByText(`No tenant has the id “nobody_${run}”`)).toBeVisible();
  await page.getByRole("link", { name: "Every tenant" }).click();
  await expect(page).toHaveURL(/\/notifications$/);
  await expect(rows.first()).toBeVisible();

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/notifications?tenant=${b.id}`);
  await expect(rows).toHaveCount(3);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await shot(page, "notifications-tenant-filter-390");
});
