// The Subscriptions page's filters at the size of a large deployment, and what a screen reader hears: the tenant
// box filters by any district typed into it (its suggestions are a help, not the list of what may be typed), and
// each search or filter says how many subscriptions it shows in a status.
import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";
import { closeE2eDb, e2eDb } from "./dashboard-seed";

const run = Date.now().toString(36);

test.afterAll(async () => {
  await closeE2eDb();
});

test("a tenant beyond the first 500 districts filters the list as it is typed", async ({ page }) => {
  // 520 districts with one endpoint each, straight into the tables: through the API it would take minutes.
  await e2eDb().query(`INSERT INTO tenants (id, name) SELECT 'zt_' || $1 || '_' || lpad(g::text, 3, '0'), 'Zed District ' || g FROM generate_series(0, 519) g`, [run]);
  await e2eDb().query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_zt_' || $1 || '_' || lpad(g::text, 3, '0'), 'Zed endpoint ' || $1 || ' ' || g, 'zt_' || $1 || '_' || lpad(g::text, 3, '0'),
            'https://zt' || g || '.k12.example/hooks', ARRAY['assignment.graded'] FROM generate_series(0, 519) g`,
    [run],
  );
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  const tenant = page.getByRole("combobox", { name: "Tenant" });
  await expect(tenant).toBeEnabled();
  await tenant.fill(`zt_${run}_519`);
  await expect(page).toHaveURL(new RegExp(`[?&]tenant=zt_${run}_519`));
  await expect.poll(() => page.locator("tbody tr td:first-child a").allInnerTexts()).toEqual([`Zed endpoint ${run} 519`]);
});

test("a search says how many subscriptions it shows, in a status a screen reader announces", async ({ page, request }) => {
  const tag = `Announce ${run}`;
  for (const i of [1, 2])
    expect(
      (await api(request, "POST", "/api/v1/subscriptions", { name: `${tag} ${i}`, url: `https://an${i}.k12.example/hooks`, eventTypes: [`announce.graded_${run}`] }))
        .status,
    ).toBe(201);
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  const search = page.getByRole("searchbox", { name: "Search" });
  await expect(search).toBeEnabled();
  await search.fill(tag.toLowerCase());
  await expect(page.getByRole("status").filter({ hasText: "Showing 2 subscriptions." })).toBeAttached();
  await search.fill(`nothing like ${run}`);
  await expect(page.getByRole("status").filter({ hasText: `0 subscriptions match “nothing like ${run}”.` })).toBeAttached();
});
