// The Dead letters page when a thousand subscriptions have dead letters (an outage that touched every district):
// the page lists the deepest subscriptions and says how many more there are, a search by name, id or tenant finds
// any other one, and the totals, the charts and the redrive links stay whole. Seeded in SQL, as the worker would
// leave them; prints the page's size.
import { expect, test } from "@playwright/test";
import { revealed, signIn } from "./helpers";
import { closeE2eDb, e2eDb, shot } from "./dashboard-seed";

test.afterAll(closeE2eDb);
test.setTimeout(240_000);

const SUBS = 1_000;
const run = Date.now().toString(36);
// A type of their own, so the other specs' publishes never fan out to a thousand unreachable endpoints.
const TYPE = `dlqscale.test_${run}`;

// The specs share one server: a thousand subscriptions with dead letters left behind would push theirs off the page.
test.afterEach(async () => {
  const db = e2eDb();
  await db.query(`DELETE FROM deliveries WHERE subscription_id LIKE $1`, [`sub_dlqs_${run}_%`]);
  await db.query(`DELETE FROM events WHERE id LIKE $1`, [`evt_dlqs_${run}_%`]);
  await db.query(`DELETE FROM event_keys WHERE id LIKE $1`, [`evt_dlqs_${run}_%`]);
  await db.query(`DELETE FROM subscriptions WHERE id LIKE $1`, [`sub_dlqs_${run}_%`]);
});

test("a thousand subscriptions with dead letters: the deepest are listed, the rest counted and searchable", async ({ page }) => {
  const db = e2eDb();
  const tenant = `scale_${run}`;
  await db.query(`INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [tenant, `Scale District ${run}`]);
  // Subscription i has 1 + (i % 3) dead letters; the last one is in its own tenant, with a name that search finds.
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types)
     SELECT 'sub_dlqs_${run}_' || lpad(i::text, 4, '0'), CASE WHEN i = $1 THEN 'Needle Academy ${run}' ELSE 'Scale ' || i END,
            CASE WHEN i = $1 THEN $2 END, 'https://scale.k12.example/hooks', '{${TYPE}}'
       FROM generate_series(1, $1::int) i`,
    [SUBS, tenant],
  );
  await db.query(
    `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values, created_at)
     SELECT 'evt_dlqs_${run}_' || i || '_' || j, '${TYPE}', convert_to('{}', 'UTF8'), now() - interval '2 hours', '{}'::jsonb, '{}', now() - interval '2 hours'
       FROM generate_series(1, $1::int) i, generate_series(0, i % 3) j`,
    [SUBS],
  );
  await db.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                             dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, event_at, created_at)
     SELECT hl_delivery_key(s, e), e, s, '${TYPE}', 'dead_letter', 1, 1, 'permanent', now() - interval '1 hour', 'http_4xx', 422,
            now() - interval '2 hours', now() - interval '2 hours'
       FROM generate_series(1, $1::int) i, generate_series(0, i % 3) j,
            LATERAL (SELECT 'sub_dlqs_${run}_' || lpad(i::text, 4, '0') AS s, 'evt_dlqs_${run}_' || i || '_' || j AS e) x`,
    [SUBS],
  );
  const seeded = (await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE state = 'dead_letter'`)).rows[0].n;

  await signIn(page, "engineer");
  const t0 = Date.now();
  const html = await page.request.get("/dlq");
  const ms = Date.now() - t0;
  const bytes = (await html.body()).length;
  // The page's own poll (every 5 s): what it reads each time.
  const poll = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/dlq", { timeout: 20_000 });
  await page.goto("/dlq");
  await revealed(page);
  await expect(page.getByTestId("dlq-depth")).toHaveText(seeded.toLocaleString("en-US"));
  const elements = await page.evaluate(() => document.querySelectorAll("*").length);
  const polled = (await (await poll).body()).length;
  // What the page polled before it listed the deepest only: the whole DLQ by subscription, every 5 s.
  const whole = (await (await page.request.get("/api/v1/dlq")).body()).length;
  console.log(
    `/dlq with ${SUBS} subscriptions with dead letters (${seeded} dead letters): ${bytes} bytes of HTML in ${ms} ms, ${elements} elements; each poll ${polled} bytes (the whole list: ${whole} bytes)`,
  );

  // The deepest 50 are listed, and the rest are counted, not dropped.
  const groups = page.getByRole("region", { name: "Redrive by filter" });
  await expect(groups.getByTestId("dlq-group")).toHaveCount(50);
  await expect(page.getByRole("region", { name: "By subscription" }).getByRole("row")).toHaveCount(51);
  // Other specs' subscriptions with dead letters share this database: the page's own total, at least the thousand.
  const more = page.getByTestId("dlq-more");
  const total = Number((await more.innerText()).match(/The deepest 50 of ([\d,]+) subscriptions/)![1].replace(/,/g, ""));
  expect(total).toBeGreaterThanOrEqual(SUBS);
  await expect(more).toContainText(`${(total - 50).toLocaleString("en-US")} more subscriptions with dead letters`);
  expect(bytes).toBeLessThan(400_000);
  await shot(page, "dlq-scale-1280");

  // A search by the tenant finds the one subscription that is not among the deepest; its redrive link is there.
  // The chart's window picked before searching stays picked.
  const ranges = page.getByRole("group", { name: "Time range" });
  await ranges.getByRole("button", { name: "6 h" }).click();
  await expect(page).toHaveURL(/[?&]range=6h\b/);
  const search = page.getByRole("searchbox", { name: "Find a subscription with dead letters" });
  await search.fill(tenant);
  await search.press("Enter");
  await expect(page).toHaveURL(new RegExp(`[?&]q=${tenant}`));
  await expect(page).toHaveURL(/[?&]range=6h\b/);
  await revealed(page);
  await expect(ranges.getByRole("button", { name: "6 h" })).toHaveAttribute("aria-pressed", "true");
  await expect(groups.getByTestId("dlq-group")).toHaveCount(1);
  await expect(groups.getByTestId("dlq-group")).toContainText(`Needle Academy ${run}`);
  await expect(page.getByTestId("dlq-more")).toContainText(`1 of ${total.toLocaleString("en-US")} subscriptions with dead letters matches`);
  await expect(groups.getByRole("link", { name: "Redrive these…" })).toHaveAttribute(
    "href",
    `/dlq/redrive?subscriptionId=sub_dlqs_${run}_${String(SUBS).padStart(4, "0")}&reason=permanent&errorClass=http_4xx&statusCode=422`,
  );
  // The totals stay the whole DLQ's.
  await expect(page.getByTestId("dlq-depth")).toHaveText(seeded.toLocaleString("en-US"));
  await shot(page, "dlq-scale-search-1280");
  await page.getByRole("link", { name: "Show the deepest" }).click();
  await expect(page).not.toHaveURL(/[?&]q=/);
  await revealed(page);
  await expect(ranges.getByRole("button", { name: "6 h" })).toHaveAttribute("aria-pressed", "true");

  // The bulk redrive page's subscription is typed, not picked from a thousand options: the page holds the deepest few as
  // suggestions, and typing the tenant suggests the one subscription that is not among them.
  const needle = `sub_dlqs_${run}_${String(SUBS).padStart(4, "0")}`;
  const redriveHtml = (await (await page.request.get("/dlq/redrive")).body()).length;
  await page.goto("/dlq/redrive");
  await revealed(page);
  const field = page.getByRole("combobox", { name: /^Subscription/ });
  const suggestions = page.locator(`datalist[id="${await field.getAttribute("list")}"] option`);
  await expect(suggestions).toHaveCount(20);
  expect(await page.locator("option").count()).toBeLessThan(60);
  await expect(page.getByTestId("subscription-help")).toContainText(`one of the ${total.toLocaleString("en-US")} with dead letters`);
  console.log(`/dlq/redrive with ${SUBS} subscriptions with dead letters: ${redriveHtml} bytes of HTML`);
  await field.fill(tenant);
  await expect(suggestions).toHaveCount(1);
  await expect(suggestions.first()).toHaveAttribute("value", needle);
  await expect(suggestions.first()).toHaveAttribute("label", `Needle Academy ${run} · 2 dead letters`);
  await field.fill(needle);
  await expect(page.getByTestId("subscription-help")).toHaveText(`Needle Academy ${run} · 2 dead letters`);
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByTestId("preview-count")).toContainText("2 deliveries match");
  await shot(page, "dlq-scale-redrive-1280");
});
