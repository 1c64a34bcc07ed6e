// What a district sees in its portal on the pages it reaches by a link or its address rather than the navigation:
// the Audit page's filters offer what its own trail can hold (not the event catalog's, retention's or the notification
// defaults' actions, recorded for the whole service), and an action it can never have, typed into the address, is an
// empty list with the reason; the Redrives page speaks of the people who run hookledger, not of engineers it has never
// met; adding an endpoint and rotating its secret say what its own endpoint does with the secret, and its name is
// under "District", not "Tenant". The Event types page tells a district what it will receive and which of its
// subscriptions receive it, not how the platform spreads a change; sending a dead letter again while its endpoint is
// paused says to resume it first, and where, not an API call; and every page a district's own manager opens is read
// for the engineers' words (tenant, operator, redrive, recover, backfill, retention, PATCH, /api/, lease, claim, ledger,
// worker), a delivery it sent again and a batch sent for it included: its timeline says a first send, sent again, a
// scheduled retry; the batches' page is "Sent again"; the Audit page names each action in words, with no action code
// in its cells. Screens at 1,280 and 390 px.
import { expect, test, type Browser, type APIRequestContext, type Page } from "@playwright/test";
import { api, cli, revealed, signIn } from "./helpers";
import { bothWidths, closeE2eDb, e2eDb, settleDelivery, shot, whilePaused } from "./dashboard-seed";
import { createDistrict, signInAsManager } from "./district";

const run = Date.now().toString(36);
// A name that ends in s, so the pages' possessive ("Garfield Public Schools' audit trail") is read every run, not
// only when the random part happens to end in one.
const D = { id: `pdw_${run}`, name: `Garfield ${run} Public Schools`, sub: `sub_pdw_${run}` };
// Two catalogued types: one the district's subscription receives, one none of its subscriptions does.
const TAKEN = `pdw.graded_${run}`;
const UNTAKEN = `pdw.unused_${run}`;
const SCHEMA = {
  type: "object",
  required: ["student_id", "score"],
  properties: { student_id: { type: "string", description: "The student's id in the district's SIS" }, score: { type: "number", description: "Percent" } },
};

test.beforeAll(async ({ request }) => {
  for (const type of [TAKEN, UNTAKEN]) {
    const made = await api(request, "POST", "/api/v1/event-types", {
      type,
      description: "A teacher recorded a grade for a student's assignment. Sent once per grade.",
      schema: SCHEMA,
      example: { student_id: "stu_1", score: 97 },
      summaryFields: ["/student_id", "/score"],
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
  }
  // Each writes a row of the district's own trail: tenant.create, subscription.create (and portal.session.create per link).
  await cli(["tenant", "create", "--id", D.id, "--name", D.name]);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: D.sub,
    name: `Garfield SIS ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: ["assignment.graded", TAKEN],
    tenant: D.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
});

test.afterAll(async () => {
  await closeE2eDb();
});

/** A browser signed in through a fresh portal link for the district (minted with an admin's token). */
async function portal(browser: Browser, request: APIRequestContext, width = 1280): Promise<Page> {
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant: D.id, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(link.json.url);
  await expect(page.getByTestId("portal-marker")).toBeVisible();
  return page;
}

/** The values a filter's select offers (its name is its label and the chosen option's text, hence the prefix). */
async function optionValues(page: Page, label: string): Promise<string[]> {
  const select = page.getByRole("form", { name: "Filter the audit log" }).getByRole("combobox", { name: new RegExp(`^${label}`) });
  // evaluateAll does not wait for the page: the select's being there does.
  await expect(select).toBeVisible();
  const values = await select.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
  expect(values.length, `${label}'s options`).toBeGreaterThan(3);
  return values;
}

test("the Audit page offers a district the actions its trail holds, and explains one it can never have", async ({ browser, request }) => {
  const page = await portal(browser, request);
  await page.goto("/audit");
  // The page speaks of the district's own trail, not of operators.
  await expect(
    page.getByText(`Who changed what for ${D.name}: its endpoints, secrets, accounts, links and deliveries sent again, newest first.`, { exact: false }),
  ).toBeVisible();
  await expect(page.getByText(/operator/i)).toHaveCount(0);
  await expect(page.getByRole("heading", { name: `Notifications to ${D.name}` })).toBeVisible();
  const actions = await optionValues(page, "Action");
  for (const never of ["event_type.create", "event_type.update", "retention.run", "notifications.settings.update"]) expect(actions).not.toContain(never);
  // Its own administration is in its trail: the district registered, its endpoint, this portal link.
  expect(actions).toEqual(expect.arrayContaining(["tenant.create", "subscription.create", "portal.session.create", "user.create", "token.create"]));
  expect(await optionValues(page, "Target type")).not.toEqual(expect.arrayContaining(["event_type"]));
  const rows = page.getByTestId("audit-row");
  // Each action in its words, the code in the cell's title.
  await expect(rows.filter({ hasText: "Registered the district" })).toHaveCount(1);
  await expect(rows.getByTestId("audit-action").and(page.locator('[title="tenant.create"]'))).toHaveText("Registered the district");
  // Who did each, in words: not the stored "token:…" or "portal:…".
  const actors = await page.getByTestId("audit-actor").allInnerTexts();
  expect(actors.length).toBeGreaterThan(0);
  expect(actors.filter((a) => /^(user|token|portal|cli):/.test(a))).toEqual([]);
  await expect(rows.filter({ hasText: "Made a portal link" }).first()).toBeVisible();

  // Chosen from the list: that action's rows only.
  await page
    .getByRole("form", { name: "Filter the audit log" })
    .getByRole("combobox", { name: /^Action/ })
    .selectOption("tenant.create");
  await page.getByRole("button", { name: "Filter", exact: true }).click();
  await expect(page).toHaveURL(/action=tenant\.create/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(D.id);

  // Typed into the address: an empty list that says why, not an error; the form shows what the list is filtered by.
  await page.goto("/audit?action=event_type.create");
  await expect(page.getByText(`Nothing in ${D.name}' audit trail matches these filters.`)).toBeVisible();
  await expect(page.getByTestId("audit-never")).toHaveText(
    `“Added an event type to the catalog” is never in ${D.name}' audit trail: it changes what every district shares, and is recorded for the whole service only.`,
  );
  await expect(page.getByRole("form", { name: "Filter the audit log" }).getByRole("combobox", { name: /^Action/ })).toHaveValue("event_type.create");
  await expect(rows).toHaveCount(0);
  await shot(page, "portal-audit-never-1280");
  await page.goto("/audit?targetType=settings");
  await expect(page.getByTestId("audit-never")).toHaveText(
    `Nothing in ${D.name}' audit trail has the target type “settings”: it changes what every district shares, and is recorded for the whole service only.`,
  );
  await page.goto("/audit?action=no.such_action");
  await expect(page.getByTestId("audit-never")).toContainText("hookledger writes no action called “no.such_action”");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/audit?action=retention.run");
  await expect(page.getByTestId("audit-never")).toContainText("never in");
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-audit-never-390");
  await page.context().close();
});

test("a district that opens /redrives by its address reads about its own deliveries, in its own words", async ({ browser, request }) => {
  const page = await portal(browser, request);
  await page.goto("/redrives");
  await expect(page.getByRole("heading", { name: "Sent again", level: 1 })).toBeVisible();
  await expect(page.locator("main")).not.toContainText(/engineer|admin/i);
  await expect(page.getByTestId("batches-empty")).toHaveText(
    "Nothing has been sent again for your district. If your endpoint missed deliveries, ask whoever sent you the portal link to have them sent again; the batch shows here.",
  );
  await expect(page.getByRole("link", { name: "New redrive…" })).toHaveCount(0);
  await shot(page, "portal-redrives-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("batches-empty")).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-redrives-390");
  await page.context().close();
});

test("a district adding an endpoint and rotating its secret is told what its own endpoint does, not what 'the district' or a tenant does", async ({
  browser,
  request,
}) => {
  const page = await portal(browser, request);
  await page.goto("/subscriptions");
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveAttribute("placeholder", "Name, id or URL");
  await page.getByRole("button", { name: "New subscription" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByTestId("fixed-tenant")).toHaveText(`District${D.name} ${D.id}`);
  await dialog.getByLabel("Name", { exact: true }).fill(`Garfield LMS ${run}`);
  await dialog.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/lms");
  await dialog.getByLabel("Other types, not listed above (comma-separated)").fill("assignment.graded");
  await dialog.getByRole("button", { name: "Create subscription" }).click();
  const once = dialog.getByTestId("secret-once");
  await expect(once).toContainText("Keep it where your endpoint reads it (WEBHOOK_SECRET below), and nowhere else");
  await expect(once).toContainText("Your endpoint verifies each delivery with the standardwebhooks package");
  await expect(dialog).not.toContainText(/the district|tenant/i);
  await shot(page, "portal-created-secret-1280");

  await dialog.getByRole("link", { name: "Open the subscription" }).click();
  await expect(page.getByRole("heading", { name: `Garfield LMS ${run}` })).toBeVisible();
  const config = page.getByRole("region", { name: "Configuration" });
  await expect(config).toContainText(`District${D.name}`);
  await expect(config).not.toContainText(/tenant/i);
  await page.getByRole("button", { name: "Rotate signing secret…" }).click();
  const rotate = page.getByRole("form", { name: "Rotate signing secret" });
  await expect(rotate).toContainText("so your endpoint can switch to the new one at your own pace.");
  await rotate.getByRole("button", { name: "Rotate now" }).click();
  await expect(page.getByTestId("secret-once")).toContainText("Your endpoint verifies each delivery");
  await expect(page.getByRole("region", { name: "Signing secrets" })).not.toContainText(/the district/i);

  // A delivery's summary names the district by its name, under its word.
  const published = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: `evt_pdw_${run}`, type: "assignment.graded", data: { score: 70 }, subject: { tenant: D.id, studentId: `stu_pdw_${run}` } },
    "producer",
  );
  expect(published.status, JSON.stringify(published.json)).toBe(202);
  const delivery = (published.json.deliveries as { id: string; subscriptionId: string }[]).find((d) => d.subscriptionId === D.sub)!;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/deliveries/${delivery.id}`);
  const summary = page.getByRole("region", { name: "Summary" });
  await expect(summary).toContainText(`District${D.name}`);
  await expect(summary).not.toContainText(/tenant/i);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "portal-delivery-summary-390");
  await page.context().close();
});

/** The words a district should never have to read: the platform's own. */
const JARGON =
  /\btenants?\b|\boperators?\b|redriv|\brecover\b|\bbackfill|\bretention\b|\bPATCH\b|\/api\/|\bleases?\b|\bclaim|\bledger\b|\bworkers?\b|\brollups?\b|\bsampler\b|\bECONN|\bENOTFOUND\b|\bEAI_|\bUND_ERR|getaddrinfo|subscriptionId=/i;
/** An audit action's code ("subscription.update", "retention.policy"): the Audit page's action cells name none for a district. */
const ACTION_CODE = /\b[a-z]+\.[a-z_]+\b/;
const jargonLines = (text: string) => text.split("\n").filter((l) => JARGON.test(l));

test("the Event types page tells a district what it will receive and which of its subscriptions receive it; an engineer keeps the platform's words", async ({
  browser,
  request,
}) => {
  const page = await portal(browser, request);
  await page.goto("/catalog");
  const main = page.locator("main");
  await expect(main).toContainText(
    "The events your endpoints can receive: what each one is and when it is sent, the fields its data carries, an example, and which of your subscriptions receive it.",
  );
  const taken = page.locator(`[data-testid="event-type"][data-type="${TAKEN}"]`);
  await expect(taken.getByRole("heading", { name: "What it is and when it is sent" })).toBeVisible();
  await expect(taken).toContainText("Sent once per grade.");
  await expect(taken.getByTestId("schema-field")).toHaveCount(2);
  await expect(taken.getByTestId("example")).toContainText('"score": 97');
  await expect(taken.getByRole("heading", { name: "Your subscriptions that receive it" })).toBeVisible();
  await expect(taken.getByRole("link", { name: `Garfield SIS ${run}` })).toBeVisible();
  await expect(page.locator(`[data-testid="event-type"][data-type="${UNTAKEN}"]`).getByTestId("catalog-subscriptions-none")).toHaveText(
    "None of your subscriptions receive it. To receive it, add it to a subscription's event types (Edit configuration on the subscription's page).",
  );
  // Not the platform's: how fast a change reaches its servers, what the lookup cards name, who edits the catalog.
  await expect(main).not.toContainText("every server");
  await expect(main).not.toContainText("Lookup cards show");
  await expect(main).not.toContainText(/engineer/i);
  expect(jargonLines(await main.innerText())).toEqual([]);
  await taken.scrollIntoViewIfNeeded();
  await bothWidths(page, "portal-catalog");
  await page.context().close();

  // A global engineer, who keeps the catalog, reads what it does to the platform.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const engineer = await context.newPage();
  await signIn(engineer, "engineer");
  await engineer.goto("/catalog");
  await expect(engineer.locator("main")).toContainText("Changes reach every server within 5 seconds.");
  await expect(engineer.locator(`[data-testid="event-type"][data-type="${TAKEN}"]`)).toContainText("Lookup cards show: /student_id, /score");
  await expect(engineer.locator(`[data-testid="event-type"][data-type="${TAKEN}"]`).getByRole("heading", { name: "Subscriptions that take it" })).toBeVisible();
  await context.close();
});

test("sending a dead letter again while its endpoint is paused says to resume it first, on the subscription's page, not an API call", async ({ browser, request }) => {
  // A dead letter, published and settled while the subscription is paused (the worker never sends it); then paused
  // again, as the district left it.
  let delivery = { id: "" };
  await whilePaused(request, D.sub, async () => {
    const published = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_pdw_paused_${run}`, type: TAKEN, data: { student_id: "stu_p", score: 40 }, subject: { tenant: D.id, studentId: "stu_p" } },
      "producer",
    );
    expect(published.status, JSON.stringify(published.json)).toBe(202);
    delivery = (published.json.deliveries as { id: string; subscriptionId: string }[]).find((d) => d.subscriptionId === D.sub)!;
    await settleDelivery(delivery.id, [{ minutesAgo: 5, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 30 }]);
  });
  const paused = await api(request, "PATCH", `/api/v1/subscriptions/${D.sub}`, { state: "paused", reason: "importer upgrade" });
  expect(paused.status).toBe(200);
  try {
    const page = await portal(browser, request);
    await page.goto(`/deliveries/${delivery.id}`);
    await page.getByRole("button", { name: "Send again…" }).click();
    await page.getByLabel("Why (kept in the audit log)").fill("Importer fixed: score may be 0");
    await page.getByRole("button", { name: "Send again", exact: true }).click();
    const alert = page.getByRole("alert").filter({ hasText: "is paused" });
    await expect(alert).toHaveText(
      `Garfield SIS ${run} is paused (importer upgrade), so this delivery would only be held. Resume it first (Resume deliveries on the subscription's page, Subscriptions › Garfield SIS ${run}), then send this delivery again.`,
    );
    await expect(alert).not.toContainText(/PATCH|\/api\/|redrive/i);
    const link = page.getByTestId("held-subscription-link");
    await expect(link).toHaveText("Open the subscription to resume it");
    await bothWidths(page, "portal-send-again-paused");
    // Nothing was sent: still a dead letter.
    const { rows } = await e2eDb().query("SELECT state FROM deliveries WHERE id = $1", [delivery.id]);
    expect(rows[0].state).toBe("dead_letter");
    await link.click();
    await expect(page.getByRole("heading", { name: `Garfield SIS ${run}`, level: 1 })).toBeVisible();
    await expect(page.getByRole("button", { name: "Resume deliveries" })).toBeVisible();
    await page.context().close();
  } finally {
    expect((await api(request, "PATCH", `/api/v1/subscriptions/${D.sub}`, { state: "active" })).status).toBe(200);
  }
});

test("a district reads its endpoint's network failures in words, and a check it answered since; an engineer keeps the messages", async ({ browser, request }) => {
  const sub = `sub_pdwf_${run}`;
  const made = await api(request, "POST", "/api/v1/subscriptions", {
    id: sub,
    name: `Garfield Grades ${run}`,
    url: "http://127.0.0.1:9/grades",
    eventTypes: [TAKEN],
    tenant: D.id,
  });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  // What the sender stores for each (lib/net/sender.ts describe): Node's and undici's codes and messages.
  const failures = [
    { k: "refused", errorClass: "connect_refused", message: "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4801", minutesAgo: 3 },
    { k: "closed", errorClass: "reset", message: "UND_ERR_SOCKET: other side closed", minutesAgo: 2 },
    { k: "dns", errorClass: "dns", message: "ENOTFOUND: getaddrinfo ENOTFOUND sis.example.org", minutesAgo: 1 },
  ];
  const ids: Record<string, string> = {};
  // Settled while paused, with their next tries 10 minutes out (dashboard-seed.ts): the worker sends none of them here.
  await whilePaused(request, sub, async () => {
    for (const f of failures) {
      const r = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_pdwf_${f.k}_${run}`, type: TAKEN, data: { student_id: `stu_f_${run}`, score: 1 }, subject: { tenant: D.id, studentId: `stu_f_${run}` } },
        "producer",
      );
      expect(r.status, JSON.stringify(r.json)).toBe(202);
      ids[f.k] = (r.json.deliveries as { id: string; subscriptionId: string }[]).find((d) => d.subscriptionId === sub)!.id;
      await settleDelivery(ids[f.k], [{ minutesAgo: f.minutesAgo, status: null, errorClass: f.errorClass, outcome: "retry", ms: 4, excerpt: f.message }]);
    }
    // A network failure has a message and no answer's body.
    await e2eDb().query("UPDATE attempts SET response_excerpt = NULL WHERE subscription_id = $1", [sub]);
    // Since then the endpoint answered a probe with a 200 (worker/probe.ts records it so).
    await e2eDb().query("UPDATE subscriptions SET last_probe_at = now(), last_probe_status = 200, last_probe_latency_ms = 12 WHERE id = $1", [sub]);
  });

  const page = await portal(browser, request);
  await page.goto(`/deliveries/${ids.refused}`);
  const timeline = page.getByRole("region", { name: "Timeline" });
  await expect(timeline.getByTestId("attempt-error")).toContainText("Your endpoint refused the connection (nothing was listening at 127.0.0.1:4801).");
  expect(await timeline.innerText()).not.toMatch(JARGON);
  await timeline.getByText("Details").click();
  await expect(timeline.getByTestId("attempt-error")).toContainText("ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4801");
  await bothWidths(page, "portal-delivery-refused");
  await page.goto(`/deliveries/${ids.closed}`);
  await expect(page.getByRole("region", { name: "Timeline" }).getByTestId("attempt-error")).toContainText("The connection was closed before an answer came.");

  await page.goto(`/subscriptions/${sub}`);
  const failing = page.getByTestId("failing-since");
  await expect(failing).toContainText("its last 3 attempts all failed, none delivered since.");
  await expect(failing.getByTestId("answered-check")).toHaveText(/^It answered a check at .+; the next delivery will show whether it is back\.$/);
  await expect(failing.getByTestId("last-answer-words")).toHaveText("The name sis.example.org could not be found (DNS)");
  await expect(page.getByTestId("answer-groups")).toContainText("Your endpoint refused the connection (nothing was listening at 127.0.0.1:4801)");
  await expect(page.getByTestId("answer-groups")).toContainText("The connection was closed before an answer came");
  // The tile beside it is counted each minute: behind the header for a minute, it says so rather than "0 of 0".
  await expect(page.getByTestId("success-1h-hint")).not.toHaveText("0 of 0 attempts");
  await expect(page.getByTestId("success-1h-hint")).toHaveText(/^(0 attempts counted yet \(counted each minute\)|\d+ of 3 attempts)$/);
  // So is the chart: while the tile is behind, its caption says the attempts are on their way, not "No attempts".
  await expect(page.getByTestId("outcomes-total")).toHaveText(/^(The newest attempts are counted each minute; they show here shortly\.|\d+ attempts\.)$/);
  await expect(page.getByText("No attempts in this range.")).toHaveCount(0);
  await revealed(page);
  expect(jargonLines(await page.locator("main").innerText())).toEqual([]);
  await bothWidths(page, "portal-subscription-answered-check");
  await page.context().close();

  // An engineer keeps the messages as stored, where they find the endpoint's fault fastest.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const engineer = await context.newPage();
  await signIn(engineer, "engineer");
  await engineer.goto(`/deliveries/${ids.refused}`);
  await expect(engineer.getByRole("region", { name: "Timeline" })).toContainText("ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4801");
  await expect(engineer.getByRole("region", { name: "Timeline" }).getByTestId("attempt-error")).toHaveCount(0);
  await engineer.goto(`/subscriptions/${sub}`);
  await expect(engineer.getByTestId("answer-groups")).toContainText("connection refused “ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4801”");
  await context.close();
});

test("every page a district's manager opens speaks to the district, an interrupted attempt, a delivery sent again and a batch included", async ({
  browser,
  page,
  request,
}) => {
  test.setTimeout(240_000);
  const d = await createDistrict(`pdwm_${run}`, `Hayes Valley USD ${run}`);
  const sub = `sub_pdwm_${run}`;
  const made = await api(request, "POST", "/api/v1/subscriptions", {
    id: sub,
    name: `Hayes SIS ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: [TAKEN],
    tenant: d.id,
  });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  const ids: Record<string, string> = {};
  // Published while paused, so the worker never sends them before they are settled (it would add attempts of its own).
  await whilePaused(request, sub, async () => {
    for (const k of ["ok", "dead", "cut", "batched"]) {
      const r = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_pdwm_${k}_${run}`, type: TAKEN, data: { student_id: `stu_${k}_${run}`, score: 90 }, subject: { tenant: d.id, studentId: `stu_${k}_${run}` } },
        "producer",
      );
      expect(r.status, JSON.stringify(r.json)).toBe(202);
      ids[k] = r.json.deliveries[0].id;
    }
    await settleDelivery(ids.ok, [{ minutesAgo: 6, status: 200, outcome: "delivered", ms: 20 }]);
    await settleDelivery(ids.dead, [{ minutesAgo: 5, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 20, excerpt: '{"error":"missing term_id"}' }]);
    // For the batch below: the dead letter hookledger's people send again with others.
    await settleDelivery(ids.batched, [{ minutesAgo: 5, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 20 }]);
    // What the reaper records for an attempt whose worker died mid-send: no answer, its own message about the lease.
    await settleDelivery(ids.cut, [{ minutesAgo: 4, status: null, errorClass: "lease_expired", outcome: "abandoned", ms: 15_000 }]);
    await e2eDb().query(
      `UPDATE attempts SET error_message = 'The lease expired before a result was written: the worker crashed or stalled; the request may have been sent (worker box:4242:x)',
              ambiguous = true, worker_id = 'box:4242:x' WHERE delivery_id = $1 AND error_class = 'lease_expired'`,
      [ids.cut],
    );
  });
  await signInAsManager(page, d);
  await page.setViewportSize({ width: 1280, height: 900 });

  // The interrupted attempt, on the lookup card and in the delivery's timeline.
  await page.goto(`/?q=stu_cut_${run}`);
  await expect(page.locator("main")).toContainText(/Retrying: attempt 2 of \d+, next at .*, last answer none recorded \(sending interrupted\)/);
  await bothWidths(page, "district-lookup-interrupted");
  await page.goto(`/deliveries/${ids.cut}`);
  const timeline = page.getByRole("region", { name: "Timeline" });
  await expect(timeline).toContainText("Attempt 1: Abandoned: sending was interrupted before an answer was recorded; the endpoint may have received it");
  await expect(timeline).toContainText("Error class: sending interrupted");
  await expect(timeline).not.toContainText(/lease|worker|box:4242/i);
  await bothWidths(page, "district-delivery-interrupted");

  // Before anything is sent again: the batches' page, under its navigation name, says whom to ask.
  await page.goto("/redrives");
  await expect(page.getByRole("heading", { name: "Sent again", level: 1 })).toBeVisible();
  await expect(page.getByTestId("batches-empty")).toHaveText(
    "Nothing has been sent again for your district. If your endpoint missed deliveries, ask the people who run hookledger to have them sent again; the batch shows here.",
  );

  // A dead letter's page offers Send again, in the district's words, to its own account as to its portal; the
  // manager sends it, and the worker's attempt follows (the endpoint refuses the connection: a scheduled retry).
  await page.goto(`/deliveries/${ids.dead}`);
  await expect(page.getByRole("button", { name: "Redrive…" })).toHaveCount(0);
  await page.getByRole("button", { name: "Send again…" }).click();
  await page.getByLabel("Why (kept in the audit log)").fill("Importer fixed: term_id sent");
  await page.getByRole("button", { name: "Send again", exact: true }).click();
  await expect
    .poll(async () => (await e2eDb().query("SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1 AND trigger = 'redrive'", [ids.dead])).rows[0].n, {
      timeout: 30_000,
    })
    .toBe(1);
  // Hookledger's people send the district's other dead letter again in a batch while its list is open: the batch shows
  // at the list's next poll with its subscription by name (the poll carries the names), not by its id until a reload.
  await page.goto("/redrives");
  await expect(page.getByTestId("batches-empty")).toBeVisible();
  const batch = await api(request, "POST", "/api/v1/redrives", { filter: { subscriptionId: sub }, reason: `INC-${run} importer fixed`, ratePerSecond: 5 });
  expect(batch.status, JSON.stringify(batch.json)).toBe(201);
  const polled = page.getByTestId("batch-row").filter({ hasText: `INC-${run} importer fixed` });
  await expect(polled).toContainText(`dead letters of Hayes SIS ${run}`, { timeout: 30_000 });
  await expect(polled).not.toContainText(sub);
  await bothWidths(page, "district-sent-again-polled");
  await expect
    .poll(async () => (await e2eDb().query("SELECT status FROM redrive_batches WHERE id = $1", [batch.json.id])).rows[0]?.status, { timeout: 30_000 })
    .toBe("done");

  // The timeline says who sent it again and what each attempt was: a first send, sent again, a scheduled retry.
  await page.goto(`/deliveries/${ids.dead}`);
  const sentAgain = page.getByRole("region", { name: "Timeline" });
  await expect(sentAgain).toContainText(`Sent again by ${d.manager.email}`);
  await expect(sentAgain).toContainText("Kind: First send");
  await expect(sentAgain).toContainText(`Kind: Sent again by ${d.manager.email}`);
  await expect(sentAgain).not.toContainText(/Trigger|redriv/i);
  // The worker's attempt after it: the endpoint refused the connection, said so in words; Node's message under Details.
  await expect(sentAgain.getByTestId("attempt-error").first()).toContainText("Your endpoint refused the connection (nothing was listening at 127.0.0.1:9).");
  expect(await sentAgain.innerText()).not.toMatch(/ECONNREFUSED/);
  await sentAgain.getByTestId("attempt-error").first().getByText("Details").click();
  await expect(sentAgain.getByTestId("attempt-error").first()).toContainText("ECONNREFUSED");
  await bothWidths(page, "district-delivery-sent-again");

  const pages = [
    "/",
    `/?q=evt_pdwm_dead_${run}`,
    `/deliveries/${ids.ok}`,
    `/deliveries/${ids.dead}`,
    `/deliveries/${ids.cut}`,
    "/subscriptions",
    `/subscriptions/${sub}`,
    "/dlq",
    "/dlq/redrive",
    "/redrives",
    `/redrives/${batch.json.id}`,
    "/audit",
    "/alerts",
    "/notifications",
    "/catalog",
    "/admin/users",
    "/admin/tenants",
  ];
  const found: string[] = [];
  for (const path of pages) {
    await page.goto(path);
    // The page's own words, once it has rendered its data (not the loading shell).
    await revealed(page);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    found.push(...jargonLines(await page.locator("main").innerText()).map((l) => `${path}: ${l}`));
  }
  expect(found).toEqual([]);
  await page.goto("/dlq");
  await bothWidths(page, "district-dlq");

  // The batches it reaches by the navigation's Sent again: what was sent, in its words.
  await page.goto("/redrives");
  await expect(page.getByRole("heading", { name: "Sent again", level: 1 })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Kind" })).toContainText("Dead letters");
  const row = page.getByTestId("batch-row").filter({ hasText: `INC-${run} importer fixed` });
  await expect(row.getByTestId("batch-kind")).toHaveText("Dead letters");
  // Its status in words, not the stored "done", and as its page says it: the delivery it sent again is still on its way
  // (the endpoint refuses the connection, so it waits for its retry). Each pill on one line at 1,280 px (no "Dead / letters").
  await expect(row.getByTestId("batch-status")).toHaveText("Sending: 1 still on their way");
  for (const pill of [row.getByTestId("batch-kind"), row.getByTestId("batch-status")]) {
    const lines = await pill.evaluate((el) => el.getClientRects().length);
    expect(lines, await pill.innerText()).toBe(1);
  }
  await expect(row).toContainText("1 sent again, 0 skipped of 1");
  await expect(row).toContainText(`dead letters of Hayes SIS ${run}`);
  await bothWidths(page, "district-sent-again");
  await row.getByRole("link", { name: batch.json.id }).click();
  await expect(page.getByRole("heading", { name: "1 dead letter sent again", level: 1 })).toBeVisible();
  await expect(page.getByTestId("batch-selection")).toHaveText(`Sent: dead letters of Hayes SIS ${run}, 5 a second.`);
  await expect(page.getByRole("link", { name: "Sent again", exact: true }).first()).toBeVisible();
  await bothWidths(page, "district-batch");

  // The Audit page: each action in the district's words, its code the cell's title; none in the cells' text.
  await page.goto("/audit");
  await expect(page.locator("main")).toContainText(`Who changed what for ${d.name}: its endpoints, secrets, accounts, links and deliveries sent again, newest first.`);
  await expect(page.locator("main")).not.toContainText("transaction");
  const actions = page.getByTestId("audit-action");
  await expect(actions.first()).toBeVisible();
  const cells = await actions.evaluateAll((tds) => tds.map((td) => ({ text: (td as HTMLElement).innerText.trim(), code: td.getAttribute("title") ?? "" })));
  expect(cells.map((c) => c.code)).toEqual(expect.arrayContaining(["delivery.redrive", "subscription.create", "subscription.pause", "subscription.resume"]));
  for (const c of cells) {
    expect(c.text, c.code).not.toMatch(ACTION_CODE);
    expect(c.text, c.code).not.toMatch(JARGON);
  }
  const redriven = cells.find((c) => c.code === "delivery.redrive")!;
  expect(redriven.text).toBe("Sent again");
  expect(cells.find((c) => c.code === "subscription.pause")!.text).toBe("Paused deliveries");
  // The batch's row: its subscription by name, not "filter subscriptionId=sub_…".
  await expect(page.getByTestId("audit-row").filter({ has: page.locator('[title="redrive.create"]') })).toContainText(
    `1 dead letter sent again: dead letters of Hayes SIS ${run}; 5 a second`,
  );
  // Each row's stored record is there for its engineers, under a name that says what it is, not "JSON".
  const record = page
    .getByTestId("audit-row")
    .filter({ has: page.locator('[title="redrive.create"]') })
    .getByTestId("audit-details");
  await expect(record.locator("summary")).toHaveText("Technical details");
  await expect(
    page
      .getByTestId("audit-details")
      .locator("summary")
      .filter({ hasText: /^JSON$/ }),
  ).toHaveCount(0);
  await record.locator("summary").click();
  await expect(record).toContainText(sub);
  await bothWidths(page, "district-audit");

  // The actor filter asks for what the Actor column shows, and takes it as shown: an email, an API token in words.
  const filterForm = page.getByRole("form", { name: "Filter the audit log" });
  const actorBox = filterForm.getByRole("textbox", { name: "Actor" });
  await expect(actorBox).toHaveAttribute("placeholder", "Email, token or portal");
  const tokenActor = (await page.getByTestId("audit-actor").allInnerTexts()).find((a) => a.startsWith("API token "))!;
  expect(tokenActor, "a row by an API token (the batch's)").toBeTruthy();
  await actorBox.fill(tokenActor);
  await filterForm.getByRole("button", { name: "Filter", exact: true }).click();
  await expect(page).toHaveURL(/actor=API/);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  expect(new Set(await page.getByTestId("audit-actor").allInnerTexts())).toEqual(new Set([tokenActor]));
  await page.goto(`/audit?actor=${encodeURIComponent(d.manager.email)}`);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  expect(new Set(await page.getByTestId("audit-actor").allInnerTexts())).toEqual(new Set([d.manager.email]));

  // A global viewer keeps the labels and the codes its action filter takes.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const admin = await context.newPage();
  await signIn(admin, "admin");
  await admin.goto(`/audit?targetId=${ids.dead}`);
  await expect(admin.getByTestId("audit-action").first()).toContainText("delivery.redrive");
  await expect(admin.getByTestId("audit-details").first().locator("summary")).toHaveText("JSON");
  await context.close();
});
