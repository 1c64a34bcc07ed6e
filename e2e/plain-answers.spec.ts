// The answer in plain words, looked at as each person
// sees it at 1,280 and 390 px: a support agent's lookup card names the student
// and assignment and quotes the district, the copied receipt is sentences a
// parent can read, an event nobody subscribed to says so; an engineer's bulk
// redrive warns about permanent rejections before confirming, and a
// fixed_at_source resolution names the corrected event on both timelines.
import { expect, test, type Page } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { closeE2eDb, e2eDb, settleDelivery, shot, whilePaused } from "./dashboard-seed";

test.afterAll(closeE2eDb);
test.setTimeout(240_000);

const noSidewaysScroll = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

test("lookup cards and receipts in the user's words; the redrive asks first; a correction on both timelines", async ({ page, request, context, browser }) => {
  const run = Date.now().toString(36);
  const tenant = `maple_${run}`;
  const student = `stu_map${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_maple_${run}`,
    name: "Maple Grove Public Schools",
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant,
  });
  expect(sub.status).toBe(201);
  const publish = async (id: string, assignmentId: string, extra: Record<string, string> = {}, type = "assignment.graded") => {
    const r = await api(
      request,
      "POST",
      "/api/v1/events",
      { id, type, data: { studentId: student, score: 41 }, subject: { tenant, studentId: student, assignmentId, ...extra } },
      "producer",
    );
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    return r;
  };
  let rejected = "";
  let corrected = "";
  await whilePaused(request, sub.json.id, async () => {
    rejected = deliveryFor(await publish(`evt_speech_${run}`, "asg_110"), sub.json.id);
    await settleDelivery(
      rejected,
      [{ minutesAgo: 4, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 31, excerpt: '{"error":"missing field term_id"}' }],
      {
        reason: "permanent",
      },
    );
    corrected = deliveryFor(await publish(`evt_speech_fixed_${run}`, "asg_110", { term_id: "2026-fall" }), sub.json.id);
    await settleDelivery(corrected, [{ minutesAgo: 1, status: 200, outcome: "delivered", ms: 18 }]);
  });
  // Received, but nobody subscribed to this type for this district.
  const unrouted = await publish(`evt_att_${run}`, "asg_0", {}, `attendance${run}.recorded`);
  expect(unrouted.json.deliveries).toEqual([]);

  // 1. Support: the card leads with the event, then who said what.
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await signIn(page, "support");
  await page.goto(`/?q=${student}`);
  const card = page.getByTestId("delivery-result").filter({ hasText: "asg_110" }).filter({ hasText: "Not delivered" });
  await expect(card.getByTestId("event-about")).toContainText(`Assignment graded · student ${student} · assignment asg_110`);
  await expect(card.getByTestId("delivery-sentence")).toHaveText(
    /^Not delivered: Maple Grove Public Schools answered HTTP 422 “missing field term_id” \(permanent\) at (\d{1,2} [A-Z][a-z]{2}, )?\d\d:\d\d:\d\d \S+$/,
  );
  await expect(page.getByText(/\b422 HTTP 422\b/)).toHaveCount(0);
  await expect(card.getByTestId("attempts-made")).toHaveText("1 of at most 7");
  // The corrected event's card (a subscription of every district that takes the type has a card of its own).
  const delivered = page.getByTestId("delivery-result").filter({ has: page.locator(`a[href="/deliveries/${corrected}"]`) });
  await expect(delivered.getByTestId("attempts-made")).toHaveText("1");
  await card.getByRole("button", { name: "Copy receipt" }).click();
  await expect(card.getByRole("button", { name: /Copied/ })).toBeVisible();
  const receipt = await page.evaluate(() => navigator.clipboard.readText());
  const [plain, ids] = receipt.split("For our engineers:");
  expect(plain).toContain(`Assignment graded for student ${student}, assignment asg_110, sent to Maple Grove Public Schools`);
  expect(plain).toContain("It was not delivered. Maple Grove Public Schools answered HTTP 422 “missing field term_id” on ");
  expect(plain).not.toMatch(/dead_letter|http_4xx|\(http_/);
  expect(ids).toContain(`Event id: evt_speech_${run}`);
  expect(ids).toContain(`Delivery id: ${rejected}`);
  await shot(page, "plain-lookup-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(card).toBeVisible();
  await noSidewaysScroll(page);
  await shot(page, "plain-lookup-390");

  // An event nobody subscribed to is received, not "nothing".
  await page.goto(`/?q=evt_att_${run}`);
  await expect(page.getByTestId("unrouted-result")).toContainText(`no endpoint subscribed to attendance${run}.recorded for ${tenant}`);
  await expect(page.getByText(/No deliveries match/)).toHaveCount(0);
  await noSidewaysScroll(page);
  await shot(page, "plain-unrouted-390");
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "plain-unrouted-1280");

  // 2. The engineer's bulk redrive says how many were rejected as permanent before the confirmation.
  const ctx = await browser.newContext();
  const eng = await ctx.newPage();
  const engineer = await signIn(eng, "engineer");
  await eng.goto(`/dlq/redrive?subscriptionId=${sub.json.id}`);
  const warning = eng.getByTestId("permanent-warning");
  await expect(warning).toContainText("This dead letter was rejected as permanent");
  await expect(warning).toContainText("Maple Grove Public Schools answered HTTP 422 “missing field term_id” (1 dead letter)");
  await expect(warning.getByRole("link", { name: "resolve these" })).toBeVisible();
  await eng.getByRole("textbox", { name: /reason/i }).fill("INC-77 Maple Grove importer fixed");
  await eng.getByRole("button", { name: /^Redrive 1 delivery/ }).click();
  await expect(eng.getByTestId("permanent-confirm")).toContainText("It was rejected as permanent");
  await shot(eng, "plain-redrive-1280");
  await eng.setViewportSize({ width: 390, height: 844 });
  await expect(warning).toBeVisible();
  await shot(eng, "plain-redrive-390");
  await eng.getByRole("button", { name: "Back" }).click();

  // 3. Resolve as fixed at source, naming the corrected event; both timelines show it.
  await eng.setViewportSize({ width: 1280, height: 900 });
  await eng.goto(`/deliveries/${rejected}`);
  await eng.getByRole("button", { name: "Resolve…" }).click();
  await eng.getByRole("combobox", { name: "Resolution" }).selectOption("fixed_at_source");
  const correctedBox = eng.getByRole("textbox", { name: /Corrected event id/ });
  await correctedBox.fill("evt_nowhere");
  await eng.getByRole("textbox", { name: /reason/i }).fill("INC-77 term_id added at the source");
  await eng.getByRole("button", { name: "Resolve 1 delivery" }).click();
  await expect(eng.getByText(/no event evt_nowhere was found/)).toBeVisible();
  await correctedBox.fill(`evt_speech_fixed_${run}`);
  await eng.getByRole("button", { name: "Resolve 1 delivery" }).click();
  const timeline = eng.getByRole("region", { name: "Timeline" });
  await expect(timeline.getByTestId("corrected-event")).toContainText(`Corrected event: evt_speech_fixed_${run}`);
  await shot(eng, "plain-resolved-1280");
  await eng.goto(`/deliveries/${corrected}`);
  await expect(eng.getByTestId("correction")).toContainText(`This event is the correction of evt_speech_${run}`);
  await expect(eng.getByTestId("correction")).toContainText(`resolved as fixed at source by ${engineer.email}`);
  await shot(eng, "plain-correction-1280");
  await eng.setViewportSize({ width: 390, height: 844 });
  await eng.reload();
  await expect(eng.getByTestId("correction")).toBeVisible();
  await noSidewaysScroll(eng);
  await shot(eng, "plain-correction-390");
  await ctx.close();
});

test("a send whose worker stopped says no answer was recorded and when it is taken back, on the lookup and the timeline", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const student = `stu_stall${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_stall_${run}`,
    name: "Cedar Falls Schools",
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: `cedar_${run}`,
  });
  expect(sub.status).toBe(201);
  let id = "";
  await whilePaused(request, sub.json.id, async () => {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_stall_${run}`, type: "assignment.graded", data: { studentId: student, score: 91 }, subject: { tenant: `cedar_${run}`, studentId: student } },
      "producer",
    );
    expect(ev.status).toBe(202);
    id = deliveryFor(ev, sub.json.id);
    // As a worker killed mid-request leaves it: claimed 40 s ago, its lease (timeout plus slack) not yet over.
    await e2eDb().query(
      `UPDATE deliveries SET state = 'in_flight', lease_owner = 'w_killed', leased_at = now() - interval '40 seconds',
              lease_until = now() + interval '10 minutes' WHERE id = $1`,
      [id],
    );
  });
  try {
    await signIn(page, "support");
    await page.goto(`/?q=${student}`);
    const card = page.getByTestId("delivery-result").first();
    // Visible, not only in the page: until the streamed page replaces the loading shell, it sits there hidden.
    await expect(card).toBeVisible();
    await expect(card).toContainText(/No answer recorded: attempt 1 of \d+ to Cedar Falls Schools began at .* and its time is up, as when sending is interrupted\./);
    await expect(card).toContainText(/taken back at .* and sent again, with the same delivery key/);
    await shot(page, "lookup-send-overdue-1280");
    await page.goto(`/deliveries/${id}`);
    await expect(page.getByText(/No answer recorded: attempt 1/).first()).toBeVisible();
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, "delivery-send-overdue-390");
  } finally {
    // Let the reaper take it back now.
    await e2eDb().query(`UPDATE deliveries SET lease_until = now() WHERE id = $1`, [id]);
  }
});
