// The Tenants page at more districts than a page holds: 100 a page with how many there are, previous and next, and a
// search by id or name; the contacts forms below are the page's tenants only. At 3,000 districts the page had printed
// every row and every contacts form at once.
import { expect, test } from "@playwright/test";
import { revealed, signIn, turnPage } from "./helpers";
import { closeE2eDb, e2eDb } from "./dashboard-seed";

const run = Date.now().toString(36);

test.afterAll(async () => {
  await closeE2eDb();
});

test("the Tenants page shows a page of tenants at a time, and finds one by name", async ({ page }) => {
  // Straight into the table: 150 districts through the CLI would take minutes.
  await e2eDb().query(
    `INSERT INTO tenants (id, name) SELECT 'pg_' || $1 || '_' || lpad(g::text, 3, '0'), 'Paged District ' || $1 || ' ' || g FROM generate_series(1, 150) g`,
    [run],
  );
  const { rows } = await e2eDb().query("SELECT count(*)::int AS n FROM tenants");
  const total = rows[0].n as number;
  await signIn(page, "admin");
  await page.goto("/admin/tenants");
  await revealed(page);
  await expect(page.getByTestId("tenant-row")).toHaveCount(100);
  await expect(page.getByTestId("tenant-contacts")).toHaveCount(100);
  const pages = page.getByRole("navigation", { name: "Tenant pages" });
  // Every other spec's districts are here too: thousands, written as the page writes numbers.
  await expect(pages).toContainText(`Tenants 1–100 of ${total.toLocaleString("en-US")}`);
  await turnPage(page, "Next", page.getByTestId("tenant-row"));
  await expect(page).toHaveURL(/[?&]page=2/);
  await expect(page.getByTestId("tenant-row")).toHaveCount(Math.min(100, total - 100));

  await page.getByRole("searchbox", { name: "Find a tenant" }).fill(`paged district ${run} 137`);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/[?&]q=/);
  await revealed(page);
  await expect(page.getByTestId("tenant-row")).toHaveCount(1);
  await expect(page.getByTestId("tenant-row")).toContainText(`pg_${run}_137`);
  await expect(page.getByTestId("tenant-contacts")).toHaveCount(1);
});
