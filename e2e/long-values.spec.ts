// Long values at 390 px: a district's own name for its endpoint may be one long word (or emoji and right-to-left
// text), an event type runs to its 100 characters, a student id to whatever the SIS makes, and a URL to 2,000
// characters. The pages that print them wrap them; none pushes its card, or the page, sideways.
import { expect, test } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { createDistrict, signInAsManager, type District } from "./district";

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
