// The DLQ page: depth and oldest-age charts over time from the
// sampler's samples, depth now (counted from the ledger) by subscription and
// reason, and filters that lead into redrive.
import { expect, test } from "@playwright/test";
import { api, signIn, deliveryFor } from "./helpers";
import { closeE2eDb, e2eDb, seedDlqHistory, settleDelivery, whilePaused, shot } from "./dashboard-seed";
import { createDistrict, signInAsManager } from "./district";

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
  // What the samplers recorded over the last six hours: every 5 min, as workers without a dashboard take them (a
  // dashboard takes one every 15 s). Sparser would be a gap (nothing running), drawn as a break.
  await seedDlqHistory(
    Array.from({ length: 72 }, (_, k) => ({
      minutesAgo: 360 - k * 5,
      depth: Math.max(0, Math.round(8 * Math.sin(k / 12)) + 4),
      oldestMinutes: 30 + Math.round((k * 10) / 3),
    })),
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

/**
 * A district whose dead letters drained in the last half hour, after a day at 40: what the sampler would have
 * recorded, for its one subscription. Every sample of the last day gets this subscription's depth (the server's own
 * sampler also records while the suite runs; after the drain, 0 is right for those that come later).
 */
async function seedDrain(subscriptionId: string) {
  const db = e2eDb();
  // Every 5 min (workers alone), every 3 min over the drain: never a stretch long enough to be a gap.
  for (let m = 24 * 60; m >= 0; m -= m > 40 ? 5 : 3) {
    // A sub-second offset: the sampler's own rows fall on whole seconds, the sampled_at key must not collide.
    await db.query(
      "INSERT INTO dlq_samples (sampled_at, depth, oldest_at) VALUES (now() - make_interval(mins => $1) + interval '0.4 s', 0, NULL) ON CONFLICT DO NOTHING",
      [m],
    );
  }
  await db.query(
    `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
     SELECT s.sampled_at, $1, 'permanent', 'http_4xx', 422, d.depth, CASE WHEN d.depth > 0 THEN now() - interval '25 hours' END
       FROM dlq_samples s,
            LATERAL (SELECT CASE WHEN s.sampled_at < now() - interval '30 minutes' THEN 40
                                 ELSE round(40 * extract(epoch FROM now() - s.sampled_at) / 1800)::int END AS depth) d
      WHERE s.sampled_at > now() - interval '25 hours'`,
    [subscriptionId],
  );
}

test("the chart opens on the hour that holds a drain, and the range chosen stays in the URL", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const d = await createDistrict(`drain_${run}`, `Drain Hollow USD ${run}`);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_drain_${run}`,
    name: `Drain Hollow SIS ${run}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: d.id,
  });
  expect(sub.status).toBe(201);
  await seedDrain(sub.json.id);

  await signInAsManager(page, d);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/dlq");
  const ranges = page.getByRole("group", { name: "Time range" });
  // Chosen from the data: a day flat at 40, then the drain in the last half hour.
  await expect(ranges.getByRole("button", { name: "1 h" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("dlq-range-why")).toHaveText("The last hour: every change of the last day happened in it.");
  const fig = page.getByTestId("chart-oldestAgeSeconds");
  await expect(fig.locator("svg.recharts-surface")).toBeVisible();
  // Even ticks: no label twice on either axis.
  for (const chart of ["chart-depth", "chart-oldestAgeSeconds"]) {
    for (const axis of ["yAxis", "xAxis"]) {
      // (recharts draws the tick labels in a layer of their own, named for the axis)
      const ticks = page.getByTestId(chart).locator(`.recharts-${axis}-tick-labels .recharts-cartesian-axis-tick-value`);
      await expect(ticks.nth(1), `${chart} ${axis} has ticks`).toBeAttached();
      const labels = await ticks.allTextContents();
      expect(new Set(labels).size, `${chart} ${axis}: ${labels.join(", ")}`).toBe(labels.length);
    }
  }
  await shot(page, "dlq-drain-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "dlq-drain-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  // A range picked is kept in the address: a reload, or the link pasted elsewhere, opens the same window.
  await ranges.getByRole("button", { name: "24 h" }).click();
  await expect(page).toHaveURL(/[?&]range=24h\b/);
  await page.reload();
  await expect(ranges.getByRole("button", { name: "24 h" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("dlq-range-why")).toHaveCount(0);
  await page.goto("/dlq?range=6h&reason=permanent");
  await expect(ranges.getByRole("button", { name: "6 h" })).toHaveAttribute("aria-pressed", "true");
  await ranges.getByRole("button", { name: "1 h" }).click();
  await expect(page).toHaveURL(/\?range=1h&reason=permanent$|\?reason=permanent&range=1h$/);
});

test("a stretch with no sample (nothing was running) is a break in both lines, said in words under them", async ({ page, request }) => {
  // Two evenings of samples, 80 to 72 and 60 to 52 hours ago, and none in the twelve hours between.
  const evening = (fromHoursAgo: number) => Array.from({ length: 97 }, (_, k) => ({ minutesAgo: fromHoursAgo * 60 - k * 5, depth: 6, oldestMinutes: 90 + k * 5 }));
  await seedDlqHistory([...evening(80), ...evening(60)]);
  // The API names the twelve hours (42 min buckets over a week: each end within one of the seeded times).
  const h = await api(request, "GET", "/api/v1/dlq/history?hours=168", undefined, "support");
  expect(h.status).toBe(200);
  const hoursAgo = (iso: string) => (Date.now() - Date.parse(iso)) / 3600_000;
  expect(
    (h.json.gaps as { from: string; to: string }[]).some((g) => Math.abs(hoursAgo(g.from) - 72) < 0.75 && Math.abs(hoursAgo(g.to) - 60) < 0.75),
    JSON.stringify(h.json.gaps),
  ).toBe(true);
  await signIn(page, "engineer");
  await page.goto("/dlq?range=7d");
  await expect(page.getByTestId("dlq-gaps")).toContainText(
    /^Nothing recorded from .+ UTC.*: hookledger was not running \(or could not reach its database\), so the lines break there\.$/,
  );
  await expect(page.getByTestId("chart-depth").locator("svg.recharts-surface")).toBeVisible();
  await shot(page, "dlq-gap-1280");
});
