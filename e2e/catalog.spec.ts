// The event catalog end to end: an engineer catalogues assignment.graded with a JSON Schema and an example through
// the page; the page shows its fields, the example and a signed example request that verifies (Standard Webhooks)
// with the example secret shown beside it; a producer's grade with a wrong field is refused at publish naming the
// field; a district's manager reads the catalog with its own subscription under the type; and the new-subscription
// dialog offers the catalogued type, and past 500 types says its list is cut. At 1,280 and 390 px.
import { expect, test, type Page } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { api, signIn } from "./helpers";
import { bothWidths, closeE2eDb, e2eDb } from "./dashboard-seed";
import { createDistrict, signInAsManager, type District } from "./district";

const run = Date.now().toString(36);
const TYPE = `assignment.graded_${run}`;
const SCHEMA = {
  type: "object",
  required: ["student_id", "term_id", "score"],
  properties: {
    student_id: { type: "string", description: "The student's id in the district's SIS" },
    term_id: { type: "string", description: "The grading term" },
    score: { type: "number", minimum: 0, maximum: 100, description: "Percent" },
  },
};
const EXAMPLE = { student_id: "stu_1", term_id: "2026-fall", score: 97 };
let district: District;
// The second test reads what the first made (one run id): a failure of the first skips it.
test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  district = await createDistrict(`catalog_${run}`, `Catalog Springs USD ${run}`);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_cat_${run}`,
    name: `Catalog Springs SIS ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: [TYPE],
    tenant: district.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
});

test.afterAll(async () => {
  await closeE2eDb();
});

const card = (page: Page) => page.locator(`[data-testid="event-type"][data-type="${TYPE}"]`);

test("an engineer catalogues a type on the page; its fields, example and a verifiable signed request show; a bad grade is refused", async ({ page, request }) => {
  test.setTimeout(120_000);
  await signIn(page, "engineer");
  await page.goto("/catalog");
  await expect(page.getByRole("heading", { level: 1, name: "Event types" })).toBeVisible();
  await page.getByRole("button", { name: "New event type" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Type").fill(TYPE);
  await dialog.getByLabel("Description").fill("A teacher recorded a grade for a student.");
  // First an example that does not match the schema: refused under the example field, nothing saved.
  await dialog.getByLabel(/JSON Schema of data/).fill(JSON.stringify(SCHEMA, null, 2));
  await dialog.getByLabel(/Example data/).fill(JSON.stringify({ student_id: 7, score: 97 }));
  await dialog.getByRole("button", { name: "Add event type" }).click();
  await expect(dialog.getByText("/student_id must be string")).toBeVisible();
  await expect(dialog.getByText("/term_id is required")).toBeVisible();
  await dialog.getByLabel(/Example data/).fill(JSON.stringify(EXAMPLE, null, 2));
  await dialog.getByLabel(/Summary fields/).fill("/student_id, /score");
  await dialog.getByRole("button", { name: "Add event type" }).click();
  await expect(dialog).toBeHidden();
  // The dialog closing is not the only sign: a status says what was added, and focus is back on the button.
  await expect(page.getByRole("status").filter({ hasText: `Added ${TYPE} to the catalog.` })).toBeVisible();
  await expect(page.getByRole("button", { name: "New event type" })).toBeFocused();

  const c = card(page);
  await expect(c).toBeVisible();
  await expect(c.getByTestId("schema-field")).toHaveCount(3);
  await expect(c.getByTestId("schema-field").first()).toContainText("student_id");
  await expect(c.getByTestId("schema-field").first()).toContainText("required");
  await expect(c.getByTestId("example")).toContainText('"term_id": "2026-fall"');
  await expect(c.getByText(`Catalog Springs SIS ${run}`)).toBeVisible();

  // The signed request, read off the page, verifies with the secret shown next to it.
  await c.getByText("Signed example request").click();
  const secret = (await c.getByTestId("example-secret").innerText()).trim();
  const text = await c.getByTestId("signed-request").innerText();
  const [head, body] = [text.slice(0, text.indexOf("\n\n")), text.slice(text.indexOf("\n\n") + 2)];
  const headers = Object.fromEntries(
    head
      .split("\n")
      .slice(1)
      .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
  );
  expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: TYPE, data: EXAMPLE });
  await bothWidths(page, "catalog-engineer");

  // A producer's grade with a string score: 422 naming the field, and nothing published.
  const bad = await api(request, "POST", "/api/v1/events", { id: `evt_cat_bad_${run}`, type: TYPE, data: { ...EXAMPLE, score: "A+" } }, "producer");
  expect(bad.status).toBe(422);
  expect(bad.json.error).toMatchObject({ code: "schema_mismatch", details: [{ path: "/data/score", message: "must be number" }] });
  const good = await api(request, "POST", "/api/v1/events", { id: `evt_cat_ok_${run}`, type: TYPE, data: EXAMPLE, subject: { tenant: district.id } }, "producer");
  expect(good.status, JSON.stringify(good.json)).toBe(202);

  // The lookup card names the catalog's summary fields of the event's data.
  await page.goto(`/?q=evt_cat_ok_${run}`);
  await expect(page.getByTestId("event-about").first()).toContainText("student id stu_1");
  await expect(page.getByTestId("event-about").first()).toContainText("score 97");
  await bothWidths(page, "catalog-lookup-summary");

  // Deleting a type that has events keeps it, deprecated, and says so.
  await page.goto("/catalog");
  page.once("dialog", (d) => void d.accept());
  await card(page).locator("..").getByRole("button", { name: "Delete or deprecate" }).click();
  await expect(card(page).locator("..").getByRole("status")).toContainText("kept and marked deprecated");
  await expect(card(page).locator("..").getByTestId("deprecated")).toBeVisible();
  await page.getByRole("button", { name: "Undeprecate" }).click();
  await expect(page.getByTestId("deprecated")).toHaveCount(0);
});

test("a district's manager reads the catalog, with its own subscription under the type, and cannot change it", async ({ page }) => {
  test.setTimeout(120_000);
  await signInAsManager(page, district);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Event types" }).click();
  await expect(page).toHaveURL(/\/catalog$/);
  const c = card(page);
  await expect(c).toBeVisible();
  await expect(c.getByTestId("schema-field")).toHaveCount(3);
  await expect(c.getByText(`Catalog Springs SIS ${run}`)).toBeVisible();
  await expect(page.getByRole("button", { name: "New event type" })).toHaveCount(0);
  await expect(c.getByRole("button", { name: "Edit" })).toHaveCount(0);
  await bothWidths(page, "catalog-district");

  // The new-subscription dialog offers the catalogued type to tick; other types are still typed in.
  await page.goto("/subscriptions");
  await page.getByRole("button", { name: /New subscription/ }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("checkbox", { name: TYPE })).toBeVisible();
  await expect(dialog.getByLabel(/Other types, not listed above/)).toBeVisible();
  await bothWidths(page, "catalog-subscription-form");
});

test("a schema saved through the dashboard's server applies to its very next publish, fast path included", async ({ request }) => {
  const type = `roster.instant_${run}`;
  // Both tokens made beforehand (the first use of a role creates its token through the CLI, seconds), so that what
  // follows happens within the server's 5 s copy of the catalog.
  expect((await api(request, "GET", "/api/v1/event-types", undefined, "engineer")).status).toBe(200);
  // A publish first, so the server's copy of the catalog is fresh (read within its 5 s) when the schema arrives.
  const before = await api(request, "POST", "/api/v1/events", { id: `evt_inst_0_${run}`, type, data: { grade: "7" }, subject: { tenant: district.id } }, "producer");
  expect(before.status, JSON.stringify(before.json)).toBe(202);
  const created = await api(
    request,
    "POST",
    "/api/v1/event-types",
    { type, description: "A roster change", schema: { type: "object", required: ["grade"], properties: { grade: { type: "integer" } } } },
    "engineer",
  );
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const single = await api(request, "POST", "/api/v1/events", { id: `evt_inst_1_${run}`, type, data: { grade: "7" }, subject: { tenant: district.id } }, "producer");
  expect(single.status, JSON.stringify(single.json)).toBe(422);
  const batch = await api(
    request,
    "POST",
    "/api/v1/events/batch",
    { events: [{ id: `evt_inst_2_${run}`, type, data: { grade: "7" }, subject: { tenant: district.id } }] },
    "producer",
  );
  expect(batch.json.results[0].error.code, JSON.stringify(batch.json)).toBe("schema_mismatch");
});

test("past 500 types the New subscription dialog says its list is cut, and a type beyond it is typed in", async ({ page }) => {
  // 520 catalogued types that sort after every other (a catalog this large is no other spec's), removed afterwards.
  const prefix = `zz_many_${run}`;
  const last = `${prefix}.t0520`;
  await e2eDb().query(
    `INSERT INTO event_types (type, description, created_by, updated_by)
     SELECT $1 || '.t' || lpad(i::text, 4, '0'), 'e2e: a long catalog', 'e2e', 'e2e' FROM generate_series(1, 520) i`,
    [prefix],
  );
  try {
    await signInAsManager(page, district);
    await page.goto("/subscriptions");
    await page.getByRole("button", { name: /New subscription/ }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog.getByTestId("event-types-cut")).toHaveText("Lists the first 500 types by name; name any other below.");
    await expect(dialog.getByRole("group", { name: "Event types" }).getByRole("checkbox")).toHaveCount(500);
    await expect(dialog.getByRole("checkbox", { name: last })).toHaveCount(0);
    await dialog.getByLabel("Name").fill(`Long catalog ${run}`);
    await dialog.getByLabel("Endpoint URL").fill("https://longcatalog.k12.example/hooks");
    await dialog.getByLabel("Other types, not listed above (comma-separated)").fill(last);
    await bothWidths(page, "catalog-cut-subscription-form");
    await dialog.getByRole("button", { name: "Create subscription" }).click();
    await expect(dialog.getByTestId("secret-once")).toBeVisible();
    const made = await e2eDb().query("SELECT event_types FROM subscriptions WHERE name = $1", [`Long catalog ${run}`]);
    expect(made.rows).toEqual([{ event_types: [last] }]);
  } finally {
    await e2eDb().query("DELETE FROM event_types WHERE type LIKE $1", [`${prefix}.%`]);
  }
});
