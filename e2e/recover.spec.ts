// Recover as an engineer sees it: a district's importer lost a day of grades,
// every one already delivered. A recover of that window (started through the
// API, as the CLI and scripts do) shows on the Redrives page with its kind and
// its progress, can be filtered by kind, and its page shows each delivery sent
// again and delivered. A real receiver answers 204; the e2e server's
// own worker (`start --workers 1`) delivers and paces.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { api, signIn, tokenFor } from "./helpers";
import { closeE2eDb, shot } from "./dashboard-seed";

const seen = new Map<string, number>();
let receiver: http.Server;

test.beforeAll(async () => {
  for (const role of ["admin", "producer", "support", "engineer"] as const) await tokenFor(role);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      seen.set(id, (seen.get(id) ?? 0) + 1);
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});

test.afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await closeE2eDb();
});

test("an engineer sees a recover batch on the Redrives page with its kind and progress, and its page shows every delivery sent again", async ({ page, request }) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const port = (receiver.address() as AddressInfo).port;
  const since = new Date(Date.now() - 60_000).toISOString();
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_recover_${run}`,
    name: `Madison SIS ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: `madison_${run}`,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  for (let i = 0; i < 8; i++) {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      {
        id: `evt_rc_${run}_${i}`,
        type: "assignment.graded",
        data: { studentId: `stu_${i}`, score: 70 + i },
        subject: { tenant: `madison_${run}`, studentId: `stu_${i}` },
      },
      "producer",
    );
    expect(ev.status).toBe(202);
  }
  await expect(async () => {
    const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}&state=delivered`, undefined, "support");
    expect(r.json.items).toHaveLength(8);
  }).toPass({ timeout: 30_000 });

  // The district lost them: send the window again, slowly enough to watch it run.
  const rec = await api(
    request,
    "POST",
    `/api/v1/subscriptions/${sub.json.id}/recover`,
    { since, reason: `INC-${run} Madison lost Tuesday`, ratePerSecond: 1 },
    "engineer",
  );
  expect(rec.status, JSON.stringify(rec.json)).toBe(201);
  expect(rec.json).toMatchObject({ kind: "recover", matched: 8 });
  const batchId = rec.json.id as string;

  await signIn(page, "engineer");
  await page.goto("/redrives");
  const row = page.getByRole("row").filter({ hasText: batchId });
  await expect(row.getByTestId("batch-kind")).toHaveText("Recover");
  // Done once all 8 are queued again; the list then says what of them is still on its way, as the batch's page does.
  await expect(row.getByTestId("batch-status")).toHaveText(/^(Running|Done|Done: [1-8] still on their way)$/);
  await expect(row).toContainText(/\d+ resent, 0 skipped of 8 · 1\/s/);
  await expect(row).toContainText(`subscription ${sub.json.id}, deliveries created`);
  await expect(row).toContainText(`INC-${run} Madison lost Tuesday`);
  await shot(page, "recover-list-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "recover-list-390");
  await page.setViewportSize({ width: 1280, height: 800 });

  // Filtered by kind: the recover is there, no redrive is.
  await page.getByRole("navigation", { name: "Kind" }).getByRole("link", { name: "Recover" }).click();
  await expect(page).toHaveURL(/kind=recover/);
  await expect(page.getByRole("row").filter({ hasText: batchId })).toBeVisible();
  for (const kind of await page.getByTestId("batch-kind").allInnerTexts()) expect(kind).toBe("Recover");

  await page.getByRole("link", { name: batchId }).click();
  await expect(page.getByRole("heading", { name: "Recover of 8 deliveries" })).toBeVisible();
  await expect(page.getByText(`subscription ${sub.json.id}, deliveries created`)).toBeVisible();
  await expect(page.getByTestId("batch-status")).toHaveText("Done", { timeout: 30_000 });
  await expect(page.getByTestId("stat-resent")).toHaveText("8");
  await expect(page.getByTestId("stat-delivered-since")).toHaveText("8", { timeout: 30_000 });
  await shot(page, "recover-done-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "recover-done-390");

  // The same webhook-id both times: each delivery key was seen twice.
  const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}`, undefined, "support");
  expect(r.json.items).toHaveLength(8);
  for (const d of r.json.items) {
    expect(d.state).toBe("delivered");
    expect(seen.get(d.deliveryKey)).toBe(2);
  }
});

test("an engineer backfills a district that joined late from its subscription page: preview, start, watch it finish", async ({ page, request }) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const port = (receiver.address() as AddressInfo).port;
  const tenant = `monroe_${run}`;
  for (let i = 0; i < 5; i++) {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_bf_${run}_${i}`, type: "assignment.graded", data: { studentId: `stu_${i}`, score: 90 }, subject: { tenant, studentId: `stu_${i}` } },
      "producer",
    );
    expect(ev.status).toBe(202);
  }
  // The district subscribes after those events.
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_late_${run}`,
    name: `Monroe SIS ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);

  await signIn(page, "engineer");
  await page.goto(`/subscriptions/${sub.json.id}`);
  await page.getByRole("button", { name: "Recover or backfill…" }).click();
  const form = page.getByRole("form", { name: "Recover or backfill" });
  await form.getByLabel(/^Backfill/).check();
  await form.getByLabel("Reason (incident or ticket id)").fill(`ONBOARD-${run} Monroe joined`);
  await form.getByLabel("Rate (per second)").fill("2");
  await form.getByRole("button", { name: "Preview" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("recover-preview")).toContainText("5 events would get a delivery, at 2/s");
  // Busy while it counted, but never disabled: focus stays on Preview, next to the count and the Backfill button.
  await expect(form.getByRole("button", { name: "Preview" })).toBeFocused();
  await shot(page, "backfill-form-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "backfill-form-390");
  await page.setViewportSize({ width: 1280, height: 800 });
  await form.getByRole("button", { name: "Backfill 5 events" }).click();

  await expect(page).toHaveURL(/\/redrives\/rdb_/);
  await expect(page.getByRole("heading", { name: "Backfill of 5 events" })).toBeVisible();
  await expect(page.getByTestId("batch-status")).toHaveText("Done", { timeout: 30_000 });
  await expect(page.getByTestId("stat-created")).toHaveText("5");
  await expect(page.getByTestId("stat-delivered-since")).toHaveText("5", { timeout: 30_000 });
  await shot(page, "backfill-done-1280");
  const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}`, undefined, "support");
  expect(r.json.items).toHaveLength(5);
  for (const d of r.json.items) expect(seen.get(d.deliveryKey)).toBe(1);
});
