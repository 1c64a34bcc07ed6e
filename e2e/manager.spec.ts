// Manager journey: open a failing subscription, read what the
// endpoint has been answering, pause it (new deliveries are held, not dropped),
// resume it.
import { expect, test } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { closeE2eDb, e2eDb, settleDelivery, whilePaused, shot } from "./dashboard-seed";

test.afterAll(closeE2eDb);
// Sign-in (scrypt) and several page loads: generous on a shared 2-core machine.
test.setTimeout(180_000);

test("failing subscription → grouped errors → pause → deliveries held → resume", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const tenant = `jefferson_${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_jeff_${run}`,
    name: `Jefferson SIS ${run}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant,
  });
  expect(sub.status).toBe(201);
  const publish = async (i: number) => {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_${run}_${i}`, type: "assignment.graded", data: { score: i }, subject: { tenant, studentId: `stu_${run}_${i}` } },
      "producer",
    );
    expect(r.status).toBe(202);
    return deliveryFor(r, sub.json.id);
  };
  await whilePaused(request, sub.json.id, async () => {
    for (let i = 0; i < 12; i++) {
      const id = await publish(i);
      await settleDelivery(id, [
        { minutesAgo: 90 - i, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 40, excerpt: `missing field term_id (row ${1000 + i})` },
      ]);
    }
    for (let i = 12; i < 15; i++) {
      const id = await publish(i);
      await settleDelivery(id, [{ minutesAgo: 20 - i, status: 503, errorClass: "http_5xx", outcome: "retry", ms: 5000, excerpt: "Service Unavailable" }]);
    }
  });

  await signIn(page, "manager");
  await page.goto("/subscriptions");
  await page.getByRole("link", { name: `Jefferson SIS ${run}` }).click();
  await expect(page.getByRole("heading", { name: `Jefferson SIS ${run}` })).toBeVisible();

  const groups = page.getByTestId("answer-groups");
  await expect(groups.locator("li").first()).toContainText("12 ×");
  await expect(groups.locator("li").first()).toContainText("422");
  await expect(groups.locator("li").first()).toContainText("missing field term_id (row #)");
  await expect(groups).toContainText("3 ×");
  await expect(groups.locator("li")).toHaveCount(2);

  // Filter the deliveries by the grouped answer.
  await groups.locator("li").first().getByRole("button", { name: "Show deliveries" }).click();
  await expect(page.getByTestId("deliveries-list").locator("li")).toHaveCount(12);
  // The outcomes chart and success rates come from the rollup the dashboard's sampler refreshes every 15 s.
  await expect(page.getByRole("region", { name: "Outcomes over time" })).toContainText("15 attempts.", { timeout: 45_000 });
  await shot(page, "subscription-1280");

  // Filter by an error class the ledger records (the filter's options are the ledger's own list).
  await page.getByRole("button", { name: "Clear filters" }).click();
  await page.getByLabel("Error class").selectOption("http_5xx");
  await expect(page.getByTestId("deliveries-list").locator("li")).toHaveCount(3);
  await expect(page.getByTestId("deliveries-list")).toContainText("503");
  await page.getByLabel("Error class").selectOption("http_4xx");
  await expect(page.getByTestId("deliveries-list").locator("li")).toHaveCount(12);
  await page.getByRole("button", { name: "Clear filters" }).click();

  await page.getByLabel("Reason").fill("district SIS maintenance");
  await page.getByRole("button", { name: "Pause deliveries" }).click();
  await expect(page.getByRole("heading", { name: `Jefferson SIS ${run}` })).toContainText("paused");
  await expect(page.getByText(/New deliveries are held, not dropped/)).toBeVisible();

  // A grade published while paused is held: recorded, queued, not sent.
  const heldId = await publish(99);
  await expect(page.getByTestId("queued-count")).toHaveText("1", { timeout: 20_000 });
  const { rows } = await e2eDb().query("SELECT state FROM deliveries WHERE id = $1", [heldId]);
  expect(rows[0].state).toBe("pending");
  await page.goto(`/?q=evt_${run}_99`);
  // Other specs' subscriptions may take the same event type; this one is Jefferson's.
  await expect(page.getByTestId("delivery-result").filter({ hasText: `Jefferson SIS ${run}` })).toContainText(`Held: Jefferson SIS ${run} is paused`);

  await page.goto(`/subscriptions/${sub.json.id}`);
  const heading = page.getByRole("heading", { name: `Jefferson SIS ${run}` });
  // The button is disabled until the page has hydrated, so the click waits for it to be live.
  await page.getByRole("button", { name: "Resume deliveries" }).click();
  await expect(heading).toContainText("active", { timeout: 15_000 });
  const audit = await e2eDb().query(
    "SELECT action, reason FROM audit_entries WHERE target_id = $1 AND action IN ('subscription.pause', 'subscription.resume') ORDER BY id DESC LIMIT 2",
    [sub.json.id],
  );
  expect(audit.rows.map((r) => r.action)).toEqual(["subscription.resume", "subscription.pause"]);
  expect(audit.rows[1].reason).toBe("district SIS maintenance");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(heading).toBeVisible();
  await shot(page, "subscription-390");
  await page.goto("/subscriptions");
  await expect(page.getByRole("link", { name: `Jefferson SIS ${run}` })).toBeVisible();
  await shot(page, "subscriptions-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "subscriptions-1280");
});
