// Resolve from the DLQ page: an engineer resolves a district's `gone` letters
// with a reason (the dialog shows the count first) and sees the depth fall at
// once, without waiting for the sampler; a support agent's lookup then answers
// "resolved — discarded by … because …".
import { expect, test } from "@playwright/test";
import { api, signIn, deliveryFor } from "./helpers";
import { closeE2eDb, settleDelivery, whilePaused, shot } from "./dashboard-seed";

test.afterAll(closeE2eDb);
test.setTimeout(180_000);

test("an engineer resolves a district's gone letters from the DLQ page; support sees the decision in the lookup", async ({ page, request, browser }) => {
  const run = Date.now().toString(36);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_wf_${run}`,
    name: `Westfield ${run}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: `westfield_${run}`,
  });
  expect(sub.status).toBe(201);
  const eventIds: string[] = [];
  const deliveryIds: string[] = [];
  await whilePaused(request, sub.json.id, async () => {
    for (let i = 0; i < 4; i++) {
      const id = `evt_wf_${run}_${i}`;
      eventIds.push(id);
      const r = await api(request, "POST", "/api/v1/events", { id, type: "assignment.graded", data: {}, subject: { tenant: `westfield_${run}` } }, "producer");
      deliveryIds.push(deliveryFor(r, sub.json.id));
      await settleDelivery(
        deliveryIds[i],
        i < 3
          ? [{ minutesAgo: 90 - i, status: 410, errorClass: "http_4xx", outcome: "dead_letter", ms: 12, excerpt: "Gone" }]
          : [{ minutesAgo: 30, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 20, excerpt: "missing term_id" }],
        { reason: i < 3 ? "gone" : "permanent" },
      );
    }
  });

  const engineer = await signIn(page, "engineer");
  await page.goto("/dlq");
  const bySub = page.getByRole("region", { name: "By subscription" });
  // The By subscription table: subscription, depth, oldest.
  const subDepth = bySub
    .getByRole("row")
    .filter({ hasText: `Westfield ${run}` })
    .locator("td")
    .nth(1);
  // Counted from the ledger as the page loads: no sampler tick to wait for.
  await expect(subDepth).toHaveText("4", { timeout: 5_000 });

  await page.getByRole("combobox", { name: "Filter by subscription" }).selectOption(sub.json.id);
  await page.getByRole("combobox", { name: "Filter by reason" }).selectOption("gone");
  await page.getByRole("button", { name: "Resolve these 3…" }).click();
  const dialog = page.getByRole("dialog", { name: "Resolve dead letters" });
  await expect(dialog).toContainText("3 dead letters match");
  const confirm = dialog.getByRole("button", { name: "Resolve 3 dead letters" });
  await expect(confirm).toBeDisabled(); // a reason is required
  await dialog.getByRole("combobox", { name: "Resolution" }).selectOption("discarded");
  await dialog.getByRole("textbox", { name: /Reason/ }).fill("Westfield decommissioned its SIS, INC-2240");
  await shot(page, "resolve-dialog-1280");
  // The count's refetch held back, as on a busy server: the dialog closes while "Resolve these 3…" is still on the
  // page, so focus goes back to it first, and must not be lost with it when the refetch takes it away.
  const summaryPoll = /\/api\/v1\/dlq\?/;
  await page.route(summaryPoll, async (route) => {
    await new Promise((r) => setTimeout(r, 2_000));
    await route.continue();
  });
  await confirm.click();
  await expect(dialog.getByRole("status")).toContainText("Resolved 3 dead letters as discarded");
  // The form and its button went; focus is on the result's Close, inside the dialog, not on the page behind it.
  const close = dialog.getByRole("button", { name: "Close" });
  await expect(close).toBeFocused();
  await shot(page, "resolve-dialog-result-1280");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  // "Resolve these 3…" left with the letters it matched: focus goes to the filter that found them.
  await expect(page.getByRole("combobox", { name: "Filter by subscription" })).toBeFocused();
  await page.unroute(summaryPoll);
  // The filter still says what it filters on, though no dead letter has that reason now.
  await expect(page.getByRole("combobox", { name: "Filter by reason" })).toHaveValue("gone");

  // The depth falls from 4 to the one permanent letter as the dialog closes (the page refetches the count), well
  // inside the sampler's 15 s, and the filter's resolve button goes with the 3 it matched.
  await expect(subDepth).toHaveText("1", { timeout: 3_000 });
  await expect(page.getByRole("button", { name: /^Resolve these/ })).toHaveCount(0, { timeout: 3_000 });
  await page.getByRole("combobox", { name: "Filter by reason" }).selectOption("");
  await shot(page, "resolve-dlq-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByRole("heading", { name: "Dead letters" })).toBeVisible();
  await shot(page, "resolve-dlq-390");

  // Support looks the event up and gets the decision in plain words.
  const ctx = await browser.newContext();
  const support = await ctx.newPage();
  await signIn(support, "support");
  await support.goto("/");
  await support.getByRole("searchbox", { name: "Search deliveries" }).fill(eventIds[0]);
  await support.getByRole("button", { name: "Search" }).click();
  const result = support.getByTestId("delivery-result").first();
  await expect(result).toContainText(`resolved — discarded by ${engineer.email} because Westfield decommissioned its SIS, INC-2240`);
  await shot(support, "resolve-lookup-1280");
  await support.setViewportSize({ width: 390, height: 844 });
  await shot(support, "resolve-lookup-390");
  // The delivery page: the decision on the timeline; support is offered neither resolve, resend nor redrive.
  await support.goto(`/deliveries/${deliveryIds[0]}`);
  await expect(support.getByRole("region", { name: "Timeline" })).toContainText("Resolved as discarded by");
  await expect(support.getByRole("button", { name: /Resend|Resolve|Redrive/ })).toHaveCount(0);
  // The engineer is offered Resend… and Redrive… on the same resolved delivery.
  await page.goto(`/deliveries/${deliveryIds[0]}`);
  await expect(page.getByRole("button", { name: "Resend…" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Redrive…" })).toBeVisible();
  await shot(page, "resolve-delivery-390");
  await ctx.close();
});
