// What accessibility.spec.ts's walk of the route list never opens, held to the same WCAG 2.1 A and AA by axe-core: every
// dialog and in-page question, read while it is open (the whole page with it), the two largest at 390 px as well; the
// sign-in page signed out and the password page; a dashboard address of nothing (not found) and a page a district may
// not open (forbidden). The error page is left out: only a stopped database reaches it honestly (database-down.spec.ts
// runs a server of its own for that).
import { expect, test, type Locator } from "@playwright/test";
import { api, deliveryFor, signIn } from "./helpers";
import { closeE2eDb, seedDetailPages, settleDelivery, whilePaused } from "./dashboard-seed";
import { audit } from "./axe";

test.afterAll(closeE2eDb);

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

test("every dialog open, sign-in, not-found and forbidden have no serious WCAG 2.1 AA violation", async ({ browser, page, request }) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const tenant = `a11yd_${run}`;
  expect((await api(request, "POST", "/api/v1/tenants", { id: tenant, name: `Birch ${run} Schools` })).status).toBe(201);
  const name = `Birch SIS ${run}`;
  const { subscriptionId } = await seedDetailPages(request, {
    tenant,
    name,
    eventId: `evt_a11yd_${run}`,
    studentId: `stu_d${run}`,
    attempts: [{ minutesAgo: 3, status: 410, errorClass: "http_410", outcome: "dead_letter", ms: 12 }],
    reason: "gone",
    incident: "INC-8 a11y",
  });
  // Dead letters that stay dead: the seeded one's batch redrives it. A dozen, so a batch of them at 1/s is still
  // running when its page opens (the cancel question).
  const dead: string[] = [];
  await whilePaused(request, subscriptionId, async () => {
    for (let i = 0; i < 12; i++) {
      const ev = await api(
        request,
        "POST",
        "/api/v1/events",
        { id: `evt_a11yd_${run}_${i}`, type: "assignment.graded", data: { score: i }, subject: { tenant } },
        "producer",
      );
      expect(ev.status).toBe(202);
      dead.push(deliveryFor(ev, subscriptionId));
      await settleDelivery(dead[i], [{ minutesAgo: 5, status: 500, errorClass: "http_5xx", outcome: "dead_letter", ms: 20 }], { reason: "exhausted" });
    }
  });
  const eventType = `a11y.checked_${run}`;
  const catalogued = await api(request, "POST", "/api/v1/event-types", { type: eventType, description: "An accessibility check ran." });
  expect(catalogued.status, JSON.stringify(catalogued.json)).toBe(201);

  const found: string[] = [];
  /** Opens a dialog with `open`, reads the page while `shown` is visible, then closes it with `close` (Escape unless said). */
  async function whileOpen(label: string, open: () => Promise<void>, shown: Locator, close: () => Promise<void> = () => page.keyboard.press("Escape")) {
    await open();
    found.push(...(await audit(page, label, shown)));
    await close();
    await expect(shown, `${label} closed`).toBeHidden();
  }
  const press = (name: string) => async () => {
    const button = page.getByRole("button", { name, exact: true });
    await expect(button).toBeEnabled();
    await button.click();
  };

  await signIn(page, "admin");
  await page.setViewportSize(DESKTOP);

  // The two largest dialogs, at both widths: New subscription (empty, refused with its fields' errors, then the
  // one-time secret), New event type.
  await page.goto("/subscriptions");
  for (const [width, viewport] of [
    ["@1280", DESKTOP],
    ["@390", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    const dialog = page.getByRole("dialog", { name: "New subscription" });
    await whileOpen(`New subscription ${width}`, press("New subscription"), dialog);
    await press("New subscription")();
    await dialog.getByRole("button", { name: "Create subscription" }).click();
    await expect(dialog.getByLabel("Name")).toHaveAttribute("aria-invalid", "true");
    found.push(...(await audit(page, `New subscription, refused ${width}`, dialog)));
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
  }
  await page.setViewportSize(PHONE);
  await press("New subscription")();
  const form = page.getByRole("dialog", { name: "New subscription" });
  await form.getByLabel("Name").fill(`Birch secret ${run}`);
  await form.getByLabel("Endpoint URL").fill("https://secret.birch.example/hooks");
  await form.getByLabel("Other types, not listed above (comma-separated)").fill(`a11yd.graded_${run}`);
  await form.getByRole("button", { name: "Create subscription" }).click();
  const created = page.getByRole("dialog", { name: `Subscription Birch secret ${run} created` });
  await whileOpen(
    "New subscription, its secret @390",
    async () => {},
    created,
    () => created.getByRole("button", { name: "Done" }).click(),
  );
  await page.setViewportSize(DESKTOP);

  await page.goto("/catalog");
  const newType = page.getByRole("dialog", { name: "New event type" });
  await whileOpen("New event type @1280", press("New event type"), newType);
  await page.setViewportSize(PHONE);
  await whileOpen("New event type @390", press("New event type"), newType);
  await page.setViewportSize(DESKTOP);
  await whileOpen(
    `Edit ${eventType}`,
    () => page.getByRole("region", { name: eventType }).getByRole("button", { name: "Edit", exact: true }).click(),
    page.getByRole("dialog", { name: `Edit ${eventType}` }),
  );

  // A subscription: Archive (modal), and its forms in the page, all open at once (each card keeps its own): Edit
  // configuration (with the catalog's types to add), endpoint headers, Rotate signing secret, Recover or backfill; then
  // the client certificate's form, which takes the headers' place.
  await page.goto(`/subscriptions/${subscriptionId}`);
  await whileOpen("Archive", press("Archive…"), page.getByRole("dialog", { name: `Archive ${name}` }));
  const card = (title: string) => page.locator("section").filter({ has: page.getByRole("heading", { name: title, exact: true }) });
  await card("Configuration").getByRole("button", { name: "Edit", exact: true }).click();
  await expect(page.getByRole("form", { name: "Edit configuration" }).getByRole("button", { name: `+ ${eventType}` })).toBeVisible();
  await press("Add headers…")();
  await press("Rotate signing secret…")();
  await press("Recover or backfill…")();
  found.push(...(await audit(page, "A subscription, its forms open", page.getByRole("form", { name: "Recover or backfill" }))));
  await press("Add certificate…")();
  found.push(...(await audit(page, "A subscription, its certificate form open", page.getByRole("form", { name: "Client certificate" }))));

  // A dead letter's page: Resolve (with the corrected event's field) and Redrive, each a question in the page.
  await page.goto(`/deliveries/${dead[0]}`);
  const resolve = page.getByRole("form", { name: "Resolve this dead letter" });
  await whileOpen(
    "Resolve this dead letter",
    async () => {
      await press("Resolve…")();
      await resolve.getByLabel("Resolution").selectOption("fixed_at_source");
    },
    resolve,
    () => resolve.getByRole("button", { name: "Cancel" }).click(),
  );
  const redrive = page.getByRole("form", { name: "Redrive this delivery" });
  await whileOpen("Redrive this delivery", press("Redrive…"), redrive, () => redrive.getByRole("button", { name: "Cancel" }).click());

  // Dead letters, filtered to the subscription: Resolve these (modal, with its count).
  await page.goto(`/dlq?subscriptionId=${subscriptionId}`);
  const group = page.getByRole("dialog", { name: "Resolve dead letters" });
  await whileOpen(
    "Resolve dead letters",
    async () => {
      await press("Resolve these 12…")();
      await expect(group).toContainText("12 dead letters match");
    },
    group,
  );

  // Redrive with its preview, its confirmation, then the batch's cancel question while it runs.
  await page.goto(`/dlq/redrive?subscriptionId=${subscriptionId}`);
  await expect(page.getByTestId("preview-count")).toContainText("12 deliveries match");
  await page.getByLabel("Reason (incident or ticket id)").fill(`INC-${run} a11y`);
  await page.getByLabel("Rate (deliveries/s)").fill("1");
  const confirm = page.getByRole("alertdialog");
  await press("Redrive 12 deliveries")();
  found.push(...(await audit(page, "Redrive, its preview and confirmation", confirm)));
  await confirm.getByRole("button", { name: "Yes, redrive 12 deliveries" }).click();
  await expect(page).toHaveURL(/\/redrives\/rdb_/);
  await whileOpen("Cancel this redrive", press("Cancel this redrive…"), page.getByRole("alertdialog"));

  // Not found: a delivery that does not exist, and an address no route answers.
  await page.goto(`/deliveries/dlv_none_${run}`);
  await expect(page.getByTestId("not-found-reason")).toBeVisible();
  found.push(...(await audit(page, "Not found (a delivery)")));
  await page.goto(`/no-such-page-${run}`);
  found.push(...(await audit(page, "Not found (no route)")));
  await page.goto("/password");
  found.push(...(await audit(page, "Change your password")));

  // Signed out: the sign-in page, at both widths.
  const out = await browser.newContext({ viewport: DESKTOP });
  const anon = await out.newPage();
  await anon.goto("/signin");
  found.push(...(await audit(anon, "Sign in @1280")));
  await anon.setViewportSize(PHONE);
  found.push(...(await audit(anon, "Sign in @390")));
  await out.close();

  // Forbidden: a district's portal opening an admin's page.
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const portalContext = await browser.newContext({ viewport: DESKTOP });
  const portal = await portalContext.newPage();
  await portal.goto(link.json.url);
  await expect(portal.getByTestId("portal-marker")).toBeVisible();
  await portal.goto("/admin/tokens");
  await expect(portal.getByRole("heading", { level: 1, name: "Not allowed for your account" })).toBeVisible();
  found.push(...(await audit(portal, "Forbidden (portal on /admin/tokens)")));
  await portalContext.close();

  if (found.length) console.log(`axe: ${found.length} serious or critical violations\n${found.join("\n")}`);
  expect(found).toEqual([]);
});
