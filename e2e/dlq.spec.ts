// The DLQ page: depth and oldest-age charts over time from the
// sampler's samples, depth now (counted from the ledger) by subscription and
// reason, and filters that lead into redrive.
import { expect, test } from "@playwright/test";
import { api, signIn, deliveryFor } from "./helpers";
import { closeE2eDb, seedDlqHistory, settleDelivery, whilePaused, shot } from "./dashboard-seed";

test.afterAll(closeE2eDb);
// Sign-in (scrypt) and several page loads: generous on a shared 2-core machine.
test.setTimeout(180_000);

test("DLQ charts render with data; depth by subscription and reason; redrive links carry the filter", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_dlq_${run}`,
    name: `Roosevelt ${run}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: `roosevelt_${run}`,
  });
  expect(sub.status).toBe(201);
  await whilePaused(request, sub.json.id, async () => {
    for (let i = 0; i < 4; i++) {
      const r = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_dlq_${run}_${i}`, type: "assignment.graded", data: {}, subject: { tenant: `roosevelt_${run}` } },
        "producer",
      );
      await settleDelivery(
        deliveryFor(r, sub.json.id),
        i < 3
          ? [{ minutesAgo: 200 - i, status: 500, errorClass: "http_5xx", outcome: "dead_letter", ms: 300, excerpt: "Internal Server Error" }]
          : [{ minutesAgo: 30, status: 404, errorClass: "http_4xx", outcome: "dead_letter", ms: 20, excerpt: "Not Found" }],
        { reason: i < 3 ? "exhausted" : "permanent" },
      );
    }
  });
  // What the sampler recorded over the last six hours (it samples every 15 s while the dashboard runs).
  await seedDlqHistory(
    Array.from({ length: 24 }, (_, k) => ({ minutesAgo: 360 - k * 15, depth: Math.max(0, Math.round(8 * Math.sin(k / 4)) + 4), oldestMinutes: 30 + k * 10 })),
  );

  await signIn(page, "engineer");
  await page.goto("/dlq");
  await expect(page.getByRole("heading", { name: "Dead letters" })).toBeVisible();
  // The depth is counted as the page loads, not at the sampler's next tick.
  await expect(page.getByText("Counted", { exact: true })).toBeVisible();
  const depth = Number((await page.getByTestId("dlq-depth").innerText()).replace(/\D/g, ""));
  expect(depth).toBeGreaterThanOrEqual(4);

  for (const chart of ["chart-depth", "chart-oldestAgeSeconds"]) {
    const fig = page.getByTestId(chart);
    await expect(fig.locator("svg.recharts-surface")).toBeVisible();
    await expect(fig.locator(".recharts-area-area path, path.recharts-area-area").first()).toBeAttached();
  }
  await page.getByRole("button", { name: "6 h" }).click();
  await expect(page.getByTestId("chart-depth").locator("svg.recharts-surface")).toBeVisible();

  await expect(page.getByRole("region", { name: "By subscription" })).toContainText(`Roosevelt ${run}`);
  await page.getByRole("combobox", { name: "Filter by subscription" }).selectOption(sub.json.id);
  await page.getByRole("combobox", { name: "Filter by reason" }).selectOption("exhausted");
  const redrive = page.getByRole("link", { name: "Redrive these 3…" });
  await expect(redrive).toHaveAttribute("href", `/dlq/redrive?subscriptionId=${sub.json.id}&reason=exhausted`);
  const row = page.getByRole("row").filter({ hasText: "HTTP 500" });
  await expect(row.getByRole("link", { name: "Redrive these…" })).toHaveAttribute(
    "href",
    `/dlq/redrive?subscriptionId=${sub.json.id}&reason=exhausted&errorClass=http_5xx&statusCode=500`,
  );
  await shot(page, "dlq-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("chart-depth").locator("svg.recharts-surface")).toBeVisible();
  await shot(page, "dlq-390");

  // The API answers the same summary (docs/API.md, GET /api/v1/dlq).
  const r = await api(request, "GET", "/api/v1/dlq", undefined, "support");
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ depth: expect.any(Number), oldestAgeSeconds: expect.any(Number) });
  expect(r.json.bySubscription.find((s: { subscriptionId: string }) => s.subscriptionId === sub.json.id)?.depth).toBe(4);
  expect(r.json.byReason.map((x: { reason: string }) => x.reason)).toEqual(expect.arrayContaining(["exhausted", "permanent"]));
});
