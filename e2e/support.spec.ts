// Support journey: a parent's ticket names a student; one search
// answers "did the grade reach the district?" and the receipt goes into the ticket.
import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";
import { closeE2eDb, settleDelivery, whilePaused, shot } from "./dashboard-seed";

test.afterAll(closeE2eDb);
// Sign-in (scrypt) and several page loads: generous on a shared 2-core machine.
test.setTimeout(180_000);

test("search a student id, see Delivered, copy a receipt holding the delivery key", async ({ page, request, context }) => {
  const run = Date.now().toString(36);
  const student = `stu_${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_lincoln_${run}`,
    name: "Lincoln USD",
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: `lincoln_${run}`,
  });
  expect(sub.status).toBe(201);
  let delivery: { id: string; subscriptionId: string; deliveryKey: string } = { id: "", subscriptionId: "", deliveryKey: "" };
  await whilePaused(request, sub.json.id, async () => {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      {
        id: `evt_${run}`,
        type: "assignment.graded",
        data: { studentId: student, score: 93 },
        subject: { tenant: `lincoln_${run}`, studentId: student, assignmentId: "asg_7" },
      },
      "producer",
    );
    expect(ev.status).toBe(202);
    delivery = ev.json.deliveries.find((d: { subscriptionId: string }) => d.subscriptionId === sub.json.id);
    await settleDelivery(delivery.id, [
      { minutesAgo: 6, status: 503, errorClass: "http_5xx", outcome: "retry", ms: 2100, excerpt: "Service Unavailable" },
      { minutesAgo: 5, status: 200, outcome: "delivered", ms: 143 },
    ]);
  });

  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await signIn(page, "support");
  await page.goto("/");
  await page.getByRole("searchbox", { name: "Search deliveries" }).fill(student);
  await page.getByRole("button", { name: "Search" }).click();

  const result = page.getByTestId("delivery-result").filter({ hasText: "Lincoln USD" });
  // In the viewer's zone, with the zone named. The attempt is seeded five
  // minutes back, so a run just after midnight sees yesterday's date before it.
  await expect(result).toContainText(/Delivered (\d{1,2} [A-Z][a-z]{2}, )?\d\d:\d\d:\d\d [A-Z][A-Za-z0-9+:-]* to Lincoln USD, HTTP 200 in 143 ms/);
  await expect(result.getByTestId("delivery-key")).toHaveText(delivery.deliveryKey);
  await expect(page.getByText(/Updated \d+ s ago/).first()).toBeVisible();

  await result.getByRole("button", { name: "Copy receipt" }).click();
  await expect(result.getByRole("button", { name: /Copied/ })).toBeVisible();
  const receipt = await page.evaluate(() => navigator.clipboard.readText());
  expect(receipt).toContain(delivery.deliveryKey);
  expect(receipt).toContain(`evt_${run}`);
  expect(receipt).toMatch(/Attempt 1 on .*: answered HTTP 503/);
  expect(receipt).toMatch(/Attempt 2 on .*: answered HTTP 200, accepted/);
  expect(receipt).toContain(`Assignment graded for student ${student}, assignment asg_7, sent to Lincoln USD`);
  expect(receipt).not.toContain("score"); // no payload in a receipt
  await shot(page, "lookup-1280");
  // The search is in the URL at once; the header's hookledger link opens an empty search, and back returns this one.
  await expect(page).toHaveURL(new RegExp(`[?&]q=${student}`));
  await page.getByRole("link", { name: "hookledger", exact: true }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("searchbox", { name: "Search deliveries" })).toHaveValue("");
  await expect(page.getByTestId("delivery-result")).toHaveCount(0);
  await page.goBack();
  await expect(page.getByRole("searchbox", { name: "Search deliveries" })).toHaveValue(student);
  await expect(result.getByTestId("delivery-key")).toHaveText(delivery.deliveryKey);

  // The timeline behind the answer.
  await result.getByRole("link", { name: "View timeline" }).click();
  await expect(page.getByRole("heading", { name: `Assignment graded for student ${student}, assignment asg_7` })).toBeVisible();
  await expect(page.getByText(`Delivery of evt_${run}`)).toBeVisible();
  await expect(page.getByText("Attempt 1: Failed, will retry")).toBeVisible();
  await expect(page.getByText("Attempt 2: Delivered")).toBeVisible();
  await expect(page.getByText("v1,[redacted]")).toBeVisible();
  await page.getByRole("button", { name: "Show raw bytes" }).click();
  await expect(page.getByTestId("payload")).toContainText(`"studentId":"${student}"`);
  await shot(page, "delivery-1280");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("payload")).toBeVisible();
  await shot(page, "delivery-390");
  await page.goto(`/?q=${student}`);
  await expect(page.getByTestId("delivery-result").first()).toBeVisible();
  await shot(page, "lookup-390");
});
