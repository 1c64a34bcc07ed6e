// Long values at 390 px: a district's own name for its endpoint may be one long word (or emoji and right-to-left
// text), an event type runs to its 100 characters, a student id to whatever the SIS makes, and a URL to 2,000
// characters. The pages that print them wrap them; none pushes its card, or the page, sideways. And an endpoint's
// answer (4 KB of it kept) scrolls in a box of its own, so it does not make its card thousands of pixels tall.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { createDistrict, signInAsManager, type District } from "./district";
import { shot } from "./dashboard-seed";

const run = Date.now().toString(36);
const sub = `sub_long_${run}`;
const eventId = `evt_long_${run}`;
const name = `📚 מחוז בית ספר 🎓 ${"Gradebookconnector".repeat(7)}${run}`;
const type = `assignment.${"graded_with_rubric_".repeat(6)}`.slice(0, 99) + "x";
const student = `stu_${"9".repeat(110)}_${run}`;
let district: District;
let delivery = "";

test.beforeAll(async ({ request }) => {
  district = await createDistrict(`long_${run}`, `${"Distrito Escolar Unificado de Santa María de los Ángeles ".repeat(4)}`.slice(0, 200).trim());
  const made = await api(request, "POST", "/api/v1/subscriptions", {
    id: sub,
    name,
    url: `https://sis.long.k12.example/hooks/${"a".repeat(1950)}`,
    eventTypes: [type],
    tenant: district.id,
  });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  const published = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: eventId, type, subject: { tenant: district.id, studentId: student }, data: { score: 9 } },
    "producer",
  );
  expect(published.status, JSON.stringify(published.json)).toBe(202);
  delivery = deliveryFor(published, sub);
});

const pages = () => [`/subscriptions?q=${sub}`, `/?q=${eventId}`, `/?q=${district.id}`, `/?q=${student}`, `/subscriptions/${sub}`, `/deliveries/${delivery}`];

async function noSidewaysScroll(page: import("@playwright/test").Page, urls: string[]) {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const url of urls) {
    await page.goto(url);
    await page.waitForLoadState("networkidle");
    await expect(page.getByRole("main")).toContainText(/Gradebookconnector|graded with rubric|Santa/i);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${url} scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
  }
}

test("long names, event types, subject values and URLs wrap at 390 px, for an admin", async ({ page }) => {
  await signIn(page, "admin");
  await noSidewaysScroll(page, pages());
});

test("long names, event types, subject values and URLs wrap at 390 px, for the district's manager", async ({ page }) => {
  await signInAsManager(page, district);
  await noSidewaysScroll(page, ["/", ...pages()]);
});

test("an endpoint's long answer scrolls in its own box on the district's card and the subscription's page, for the district's manager", async ({ page, request }) => {
  test.setTimeout(120_000);
  // What the endpoint answers is its own choice: here 4 KB of it, the excerpt hookledger keeps, which the district's
  // card and the subscription's header printed whole (a card some 3,000 px tall at 390 px).
  const answer = `Service Unavailable. ${"Our gradebook is being upgraded; please retry later. ".repeat(80)}`;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = 503;
      res.end(answer);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const failing = `sub_long_answer_${run}`;
    const made = await api(request, "POST", "/api/v1/subscriptions", {
      id: failing,
      name: `Long answers ${run}`,
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      eventTypes: [type],
      tenant: district.id,
      retryPolicy: { ladderSeconds: [1, 1, 1, 1, 1], maxAttempts: 50 },
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const published = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_long_answer_${run}`, type, subject: { tenant: district.id, studentId: student }, data: { score: 9 } },
      "producer",
    );
    expect(published.status, JSON.stringify(published.json)).toBe(202);
    await signInAsManager(page, district);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [url, name] of [
      ["/", "long-answer-district"],
      [`/subscriptions/${failing}`, "long-answer-subscription"],
    ] as const) {
      await page.goto(url);
      const banner = page.getByTestId("failing-since").filter({ hasText: "Service Unavailable" }).first();
      await expect(banner).toBeVisible({ timeout: 30_000 });
      // The banner stays a few lines tall; the whole answer is there, in a box of its own that scrolls.
      const height = (await banner.boundingBox())!.height;
      expect(height, `${url}: the failing banner is ${height} px tall`).toBeLessThan(300);
      const words = banner.getByTestId("last-answer-words");
      await expect(words).toContainText("please retry later. Our gradebook");
      expect(await words.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
      await shot(page, `${name}-390`);
      await page.setViewportSize({ width: 1280, height: 900 });
      await shot(page, `${name}-1280`);
      await page.setViewportSize({ width: 390, height: 844 });
    }
  } finally {
    await new Promise((r) => receiver.close(r));
  }
});
