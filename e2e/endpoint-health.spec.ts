// An endpoint that answers 503 to everything is paused for failing by the
// e2e server's own worker; the subscription page's Endpoint health card says
// why, since when, what the last probe got and when the next is due, and how
// many deliveries are held. The endpoint comes back, a probe resumes it, and
// the held deliveries arrive. Screens at 1,280 and 390 px.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { closeE2eDb, e2eDb, shot } from "./dashboard-seed";
import { deliveryKey } from "../lib/ledger/delivery-key";

let receiver: http.Server;
let status = 503;
const received: string[] = [];

test.beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(String(req.headers["webhook-id"]));
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});

test.afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await closeE2eDb();
});

test("a failing endpoint is paused for failing, probed, and resumed; the page shows why and what the probe got", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const id = `sub_health_${run}`;
  const port = (receiver.address() as AddressInfo).port;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Lincoln gradebook ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: `lincoln_${run}`,
    retryPolicy: { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 },
    // One at a time, so the drain's order is the order of arrival.
    maxConcurrency: 1,
    failurePolicy: { windowSeconds: 60, minAttempts: 3, probeIntervalSeconds: 10 },
  });
  expect(sub.status).toBe(201);
  // A two-second window, below the API's minute, so the test does not wait a minute.
  await e2eDb().query("UPDATE subscriptions SET failure_window_seconds = 2, probe_interval_seconds = 2 WHERE id = $1", [id]);
  const keys: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_health_${run}_${i}`, type: "assignment.graded", data: { i }, subject: { tenant: `lincoln_${run}` } },
      "producer",
    );
    expect(r.status).toBe(202);
    expect(deliveryFor(r, id)).toBeTruthy();
    keys.push(deliveryKey(id, `evt_health_${run}_${i}`));
  }
  await expect.poll(async () => (await api(request, "GET", `/api/v1/subscriptions/${id}`)).json.pausedReason, { timeout: 30_000 }).toBe("failing");
  await expect.poll(async () => (await api(request, "GET", `/api/v1/subscriptions/${id}`)).json.health.lastProbe?.status, { timeout: 20_000 }).toBe(503);

  await signIn(page, "manager");
  // The list tells the failure window's pause from an operator's.
  await page.goto(`/subscriptions?tenant=lincoln_${run}`);
  await expect(
    page
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: `Lincoln gradebook ${run}` }) })
      .getByText("Paused (failing)"),
  ).toBeVisible();
  await page.goto(`/subscriptions/${id}`);
  const card = page.getByRole("region", { name: "Endpoint health" });
  await expect(card.getByText("Paused (failing)")).toBeVisible();
  await expect(card.getByText(/3 deliveries are held, not dropped/)).toBeVisible();
  await expect(card.getByText(/HTTP 503 in \d+/)).toBeVisible();
  await expect(card.getByText("Next probe")).toBeVisible();
  // Its attempts all began a minute ago: once the minute's counts are rolled up, the page opens its outcomes chart on
  // the last hour, not as a sliver at the right of a day.
  await expect(async () => {
    await page.goto(`/subscriptions/${id}`);
    await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "1h", pressed: true })).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 90_000 });
  await card.scrollIntoViewIfNeeded();
  await shot(page, "endpoint-health-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await card.scrollIntoViewIfNeeded();
  await shot(page, "endpoint-health-390");
  await page.setViewportSize({ width: 1280, height: 800 });

  // The district fixes its endpoint: the next probe resumes the subscription and the held deliveries arrive, oldest first.
  status = 204;
  await expect(card.getByText(/answered 204/)).toBeVisible({ timeout: 30_000 });
  // The probe's 2xx is not a delivery: the card says the last delivery attempt succeeded once a held one is delivered.
  await expect(card.getByText(/^The last delivery attempt succeeded, at /)).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("failing-since")).toHaveCount(0);
  await expect.poll(() => keys.every((k) => received.includes(k)), { timeout: 30_000 }).toBe(true);
  const firstOk = keys.map((k) => received.lastIndexOf(k));
  expect([...firstOk].sort((a, b) => a - b)).toEqual(firstOk);
});

// With the failure window off it keeps no run of failures, so the card must not take "none counted" for "none failed";
// with it on, the run it counts toward a pause is shown as that, beside what the last delivery attempts did.
test("a failing endpoint's card says its last delivery attempts failed, as the header does, with the window off or counting", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const off = `sub_nowindow_${run}`;
  const on = `sub_window_${run}`;
  const failing = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(503).end("Service Unavailable"));
  });
  await new Promise<void>((r) => failing.listen(0, "127.0.0.1", r));
  try {
    for (const [id, failurePolicy] of [
      [off, null],
      [on, undefined],
    ] as const) {
      const sub = await api(request, "POST", "/api/v1/subscriptions", {
        id,
        name: `Oakridge roster ${id === off ? "" : "(window) "}${run}`,
        url: `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hooks`,
        eventTypes: ["assignment.graded"],
        tenant: `oakridge_${run}`,
        retryPolicy: { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 4 },
        maxConcurrency: 1,
        ...(failurePolicy === null ? { failurePolicy } : {}),
      });
      expect(sub.status).toBe(201);
    }
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_nowindow_${run}`, type: "assignment.graded", data: {}, subject: { tenant: `oakridge_${run}` } },
      "producer",
    );
    expect(r.status).toBe(202);
    // Four attempts each, all answered 503, the last dead-lettering the delivery.
    for (const id of [off, on])
      await expect.poll(async () => (await api(request, "GET", `/api/v1/deliveries/${deliveryFor(r, id)}`)).json.state, { timeout: 30_000 }).toBe("dead_letter");
    expect((await api(request, "GET", `/api/v1/subscriptions/${off}`)).json.health).toMatchObject({ failedAttempts: 0, failingSince: null });
    expect((await api(request, "GET", `/api/v1/subscriptions/${on}`)).json.health).toMatchObject({ failedAttempts: 4 });

    await signIn(page, "manager");
    for (const id of [off, on]) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`/subscriptions/${id}`);
      await expect(page.getByTestId("failing-since")).toContainText("its last 4 attempts all failed");
      const card = page.getByRole("region", { name: "Endpoint health" });
      await expect(card.getByText(/succeeded/)).toHaveCount(0);
      await expect(card.getByTestId("last-attempts")).toHaveText(/^The last 4 delivery attempts failed, since .+; no success in the last 30 days\.$/);
      if (id === off) {
        await expect(card.getByText("off: this subscription is never paused for failing")).toBeVisible();
        await expect(card.getByTestId("toward-pause")).toHaveCount(0);
      } else await expect(card.getByTestId("toward-pause")).toHaveText(/^4 failed attempts in a row since /);
      const name = id === off ? "endpoint-health-window-off" : "endpoint-health-counting";
      await card.scrollIntoViewIfNeeded();
      await shot(page, `${name}-1280`);
      await page.setViewportSize({ width: 390, height: 844 });
      await card.scrollIntoViewIfNeeded();
      await shot(page, `${name}-390`);
    }
  } finally {
    await new Promise((r) => failing.close(r));
  }
});

test("the outcomes chart's range stays in the address: a reload or a pasted link opens the same window", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const id = `sub_range_${run}`;
  expect(
    (await api(request, "POST", "/api/v1/subscriptions", { id, name: `Range ${run}`, url: "http://127.0.0.1:9/hooks", eventTypes: [`range.graded_${run}`] })).status,
  ).toBe(201);
  await signIn(page, "admin");
  await page.goto(`/subscriptions/${id}`);
  const ranges = page.getByRole("group", { name: "Time range" });
  await expect(ranges.getByRole("button", { name: "24h", pressed: true })).toBeVisible();
  await ranges.getByRole("button", { name: "7d" }).click();
  await expect(page).toHaveURL(new RegExp(`/subscriptions/${id}\\?range=7d$`));
  await page.reload();
  await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "7d", pressed: true })).toBeVisible();
  await expect(page.getByRole("img", { name: /^Attempt outcomes, last 7d: / })).toBeVisible();
  // An address that names no range of the list opens the default.
  await page.goto(`/subscriptions/${id}?range=forever`);
  await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "24h", pressed: true })).toBeVisible();
});

test("an endpoint that answers 429 with Retry-After is left alone until then, and its page says until when", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const id = `sub_wait_${run}`;
  const hits: string[] = [];
  const gateway = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits.push(String(req.headers["webhook-id"]));
      res.writeHead(429, { "retry-after": "600" }).end("slow down");
    });
  });
  await new Promise<void>((r) => gateway.listen(0, "127.0.0.1", r));
  try {
    const sub = await api(request, "POST", "/api/v1/subscriptions", {
      id,
      name: `Riverside gateway ${run}`,
      url: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/hooks`,
      eventTypes: ["assignment.graded"],
      tenant: `riverside_${run}`,
      maxConcurrency: 1,
    });
    expect(sub.status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const r = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_wait_${run}_${i}`, type: "assignment.graded", data: { i }, subject: { tenant: `riverside_${run}` } },
        "producer",
      );
      expect(r.status).toBe(202);
    }
    const read = async () => (await api(request, "GET", `/api/v1/subscriptions/${id}`)).json;
    await expect.poll(async () => (await read()).health.heldUntil, { timeout: 30_000 }).not.toBeNull();
    // Held for the hour the ledger allows at most (the endpoint asked for ten minutes: ten it is).
    const until = new Date((await read()).health.heldUntil).getTime();
    expect(until - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    await signIn(page, "manager");
    await page.goto(`/subscriptions/${id}`);
    const notice = page.getByRole("region", { name: "Endpoint health" }).getByTestId("held-by-endpoint");
    await expect(notice).toContainText("Waiting, as the endpoint asked");
    await expect(notice).toContainText("3 deliveries are waiting, not dropped");
    // One request, the one that was answered 429: the other two were never sent into the window.
    expect(hits).toHaveLength(1);
    await notice.scrollIntoViewIfNeeded();
    await shot(page, "endpoint-held-by-retry-after");
  } finally {
    await new Promise((r) => gateway.close(r));
  }
});
