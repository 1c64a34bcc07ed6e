// The Subscriptions page with more subscriptions than a page holds: 300 made
// through the API, then searched (debounced, on the server), paged forward
// and back, and re-sorted from the browser; the page's state is in its URL,
// so a reload shows the same page. Screenshots at 1,280 and 390 px wide.
import { expect, test, type Page } from "@playwright/test";
import { api, revealed, signIn, turnPage } from "./helpers";
import { closeE2eDb, shot } from "./dashboard-seed";

const COUNT = 300;
const run = Date.now().toString(36);
const nameOf = (i: number) => `Paging ${run} District ${String(i).padStart(3, "0")}`;

test.afterAll(async () => {
  await closeE2eDb();
});

/** The subscription names in the table, in order. */
const rows = (page: Page) => page.locator("tbody tr td:first-child a");
const names = (page: Page): Promise<string[]> => rows(page).allInnerTexts();

test("the Subscriptions page searches, pages and sorts on the server with 300 subscriptions", async ({ page, request }) => {
  test.setTimeout(240_000);
  for (let i = 0; i < COUNT; i += 20) {
    const made = await Promise.all(
      Array.from({ length: Math.min(20, COUNT - i) }, (_, k) =>
        api(request, "POST", "/api/v1/subscriptions", {
          name: nameOf(i + k),
          url: `https://d${i + k}-${run}.k12.example/hooks`,
          eventTypes: ["assignment.graded"],
          tenant: `pg${run}_${(i + k) % 30}`,
        }),
      ),
    );
    for (const m of made) expect(m.status, JSON.stringify(m.json)).toBe(201);
  }

  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  await revealed(page);
  await page.getByRole("searchbox", { name: "Search" }).fill(`paging ${run}`);
  // Debounced: the URL and the rows follow once typing stops.
  await expect(page).toHaveURL(new RegExp(`[?&]q=paging(\\+|%20)${run}`));
  await expect.poll(() => names(page)).toEqual(Array.from({ length: 50 }, (_, i) => nameOf(i)));

  // A slow server: a render of the page takes four seconds. A page turn must not wait for one to put the page in the
  // URL: the URL holds the page as soon as its rows show, so a reload at any moment reloads what is on screen.
  await page.route(
    (url) => url.pathname === "/subscriptions",
    async (route) => {
      if (route.request().headers()["rsc"]) await new Promise((r) => setTimeout(r, 4_000));
      await route.fallback();
    },
  );
  const cursorInUrl = () => new URL(page.url()).searchParams.get("cursor");
  await turnPage(page, "Next", rows(page));
  await expect.poll(() => names(page)).toEqual(Array.from({ length: 50 }, (_, i) => nameOf(50 + i)));
  const second = cursorInUrl();
  expect(second).toBeTruthy();
  await turnPage(page, "Next", rows(page));
  await expect.poll(async () => (await names(page))[0]).toBe(nameOf(100));
  const third = cursorInUrl();
  expect(third).toBeTruthy();
  expect(third).not.toBe(second);
  await turnPage(page, "Previous", rows(page));
  await expect.poll(() => names(page)).toEqual(Array.from({ length: 50 }, (_, i) => nameOf(50 + i)));
  expect(cursorInUrl()).not.toBe(third);
  await page.unroute((url) => url.pathname === "/subscriptions");
  await page.reload();
  await revealed(page);
  await expect.poll(() => names(page)).toEqual(Array.from({ length: 50 }, (_, i) => nameOf(50 + i)));
  await shot(page, "subscriptions-paging-1280");

  await page.getByLabel("Sort by").selectOption("-name");
  await expect(page).toHaveURL(/[?&]sort=-name/);
  await expect(page).not.toHaveURL(/[?&]cursor=/);
  await revealed(page);
  await expect.poll(() => names(page)).toEqual(Array.from({ length: 50 }, (_, i) => nameOf(COUNT - 1 - i)));
  await expect(page.getByRole("button", { name: "← Previous" })).toBeDisabled();
  // Walk to the end: the last page has no Next.
  for (let p = 0; p < 5; p++) await turnPage(page, "Next", rows(page));
  await expect.poll(async () => (await names(page)).at(-1)).toBe(nameOf(0));
  await expect(page.getByRole("button", { name: "Next →" })).toBeDisabled();

  // A search for one, by its URL.
  await page.getByRole("searchbox", { name: "Search" }).fill(`d123-${run}.k12`);
  await expect.poll(() => names(page)).toEqual([nameOf(123)]);
  await page.getByRole("searchbox", { name: "Search" }).fill(`no such district ${run}`);
  await expect(page.getByText(`No subscription matches “no such district ${run}”`)).toBeVisible();

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/subscriptions?q=paging+${run}&sort=-created`);
  await revealed(page);
  await expect.poll(async () => (await names(page)).length).toBe(50);
  await expect(page.getByRole("button", { name: "Next →" })).toBeVisible();
  await shot(page, "subscriptions-paging-390");
});

test("the Subscriptions page follows its URL: back and forward step through the pages, the header's link clears the search", async ({ page, request }) => {
  test.setTimeout(120_000);
  const tag = `Backfwd ${run}`;
  for (let i = 0; i < 60; i += 20) {
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, k) =>
        api(request, "POST", "/api/v1/subscriptions", {
          name: `${tag} ${String(i + k).padStart(2, "0")}`,
          url: `https://bf${i + k}.k12.example/hooks`,
          eventTypes: [`backfwd.graded_${run}`],
        }),
      ),
    );
    for (const m of made) expect(m.status, JSON.stringify(m.json)).toBe(201);
  }
  // One the search leaves out, first by name in the unfiltered list.
  const other = `Aaa other ${run}`;
  expect(
    (await api(request, "POST", "/api/v1/subscriptions", { name: other, url: "https://other.k12.example/hooks", eventTypes: [`backfwd.graded_${run}`] })).status,
  ).toBe(201);
  const nameAt = (i: number) => `${tag} ${String(i).padStart(2, "0")}`;
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, "admin");
  await page.goto(`/subscriptions?q=${encodeURIComponent(tag.toLowerCase())}`);
  await revealed(page);
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(0));
  await turnPage(page, "Next", rows(page));
  await expect(page).toHaveURL(/[?&]cursor=/);
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(50));

  // Back is the first page again, and forward the second, rows and all.
  await page.goBack();
  await expect(page).not.toHaveURL(/[?&]cursor=/);
  await revealed(page);
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(0));
  await page.goForward();
  await expect(page).toHaveURL(/[?&]cursor=/);
  await revealed(page);
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(50));

  // The header's Subscriptions link opens the unfiltered list: what the URL says is what the page shows.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Subscriptions", exact: true }).click();
  await expect(page).toHaveURL(/\/subscriptions$/);
  await revealed(page);
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveValue("");
  await expect.poll(async () => (await names(page)).includes(other)).toBe(true);
  // Back returns the search, in the box as in the rows.
  await page.goBack();
  await revealed(page);
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveValue(tag.toLowerCase());
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(50));

  // A cursor that is no longer good (an old link, another sort's): the first page, and the URL says so.
  await page.goto(`/subscriptions?q=${encodeURIComponent(tag.toLowerCase())}&cursor=not-a-cursor`);
  await revealed(page);
  await expect(page).not.toHaveURL(/[?&]cursor=/);
  await expect(page).toHaveURL(/[?&]q=/);
  await expect.poll(async () => (await names(page))[0]).toBe(nameAt(0));
});
