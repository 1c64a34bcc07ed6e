// Each page names itself in the browser's tab, so a support agent with a row of
// tabs open can tell them apart: every page of the route list, the detail pages
// by what they show, and the lookup by its question, which a search changes.
import { expect, test } from "@playwright/test";
import { PAGE_PERMISSIONS } from "../components/dashboard/page-access";
import { signIn } from "./helpers";
import { closeE2eDb, seedDetailPages } from "./dashboard-seed";

test.afterAll(closeE2eDb);

test("every dashboard page has a title of its own; a delivery, subscription and redrive are named by what they are", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const tenant = `birch_${run}`;
  const { ids } = await seedDetailPages(request, {
    tenant,
    name: `Birch Hill Schools ${run}`,
    eventId: `evt_title_${run}`,
    studentId: `stu_t${run}`,
    attempts: [{ minutesAgo: 2, status: 410, errorClass: "http_410", outcome: "dead_letter", ms: 12 }],
    reason: "gone",
    incident: "INC-9 titles",
  });
  const expected: Record<string, string> = {
    "/deliveries/[id]": `Assignment graded for student stu_t${run} · Birch Hill Schools ${run} · hookledger`,
    "/subscriptions/[id]": `Birch Hill Schools ${run} · hookledger`,
    "/redrives/[id]": "Redrive of 1 delivery · hookledger",
    "/": "Lookup · hookledger",
  };
  await signIn(page, "admin");
  const seen = new Map<string, string>();
  for (const route of Object.keys(PAGE_PERMISSIONS)) {
    await page.goto(route.replace("[id]", ids[route] ?? ""));
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    const title = await page.title();
    expect(title, route).toMatch(/^.+ · hookledger$/);
    if (expected[route]) expect(title, route).toBe(expected[route]);
    expect(seen.get(title), `${route} has the title of ${seen.get(title)}`).toBeUndefined();
    seen.set(title, route);
  }

  // The lookup's search changes the address without a new page; the title follows it, and back.
  await page.goto("/");
  await page.getByRole("searchbox").or(page.getByRole("textbox").first()).fill(`stu_t${run}`);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveTitle(`“stu_t${run}” · Lookup · hookledger`);
  await page.goto(`/?q=evt_title_${run}`);
  await expect(page).toHaveTitle(`“evt_title_${run}” · Lookup · hookledger`);
  // A delivery someone may not see is not named in the tab either.
  await page.goto("/deliveries/dlv_doesnotexist");
  expect(await page.title()).not.toContain("Birch");
});
