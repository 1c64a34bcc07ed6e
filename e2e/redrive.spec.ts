// Bulk redrive as an engineer does it: a district's importer
// rejected a batch of grades with 422; they fixed it; the engineer filters the
// dead letters by reason, previews, confirms, and watches the batch reach done.
// A real receiver in this test answers 422, then 204; the e2e server's own
// worker (`start --workers 1`) delivers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { api, deliveryFor, revealed, signIn, tokenFor, turnPage } from "./helpers";
import { bothWidths, closeE2eDb, e2eDb, settleDelivery, shot, whilePaused } from "./dashboard-seed";

let answer = 422;
const seen = new Map<string, number>();
let receiver: http.Server;

test.beforeAll(async () => {
  // Tokens come from the CLI (seconds each): make them up front.
  for (const role of ["admin", "producer", "support", "engineer"] as const) await tokenFor(role);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      seen.set(id, (seen.get(id) ?? 0) + 1);
      res.statusCode = answer;
      res.end(answer === 422 ? '{"error":"term_id is required"}' : "");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});

test.afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await closeE2eDb();
});

test("an engineer filters the DLQ by reason, previews, confirms and watches the redrive reach done", async ({ page, request }) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const port = (receiver.address() as AddressInfo).port;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_redrive_${run}`,
    name: `Jefferson SIS ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: `jefferson_${run}`,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  for (let i = 0; i < 6; i++) {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      {
        id: `evt_rd_${run}_${i}`,
        type: "assignment.graded",
        data: { studentId: `stu_${i}`, score: 80 + i },
        subject: { tenant: `jefferson_${run}`, studentId: `stu_${i}`, assignmentId: "asg_7" },
      },
      "producer",
    );
    expect(ev.status).toBe(202);
  }
  // The worker sends each once; the importer answers 422, so each is dead-lettered at once (permanent).
  await expect(async () => {
    const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}&state=dead_letter`, undefined, "support");
    expect(r.json.items).toHaveLength(6);
  }).toPass({ timeout: 30_000 });
  answer = 204; // the district fixed its importer

  await signIn(page, "engineer");
  // The DLQ page's "Redrive these…" link carries the subscription; the reason is chosen here.
  await page.goto(`/dlq/redrive?subscriptionId=${sub.json.id}`);
  await expect(page.getByRole("heading", { name: "Redrive dead letters" })).toBeVisible();
  await expect(page.getByLabel("Subscription")).toHaveValue(sub.json.id);
  // The page previews what the link carried as it opens; a press while that runs is refused (busy), as it was when the
  // button was disabled then.
  await expect(page.getByRole("button", { name: "Preview", exact: true })).not.toHaveAttribute("aria-disabled", "true");
  await page.getByLabel("Dead-letter reason").selectOption("permanent");
  await page.getByRole("button", { name: "Preview", exact: true }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("preview-count")).toContainText("6 deliveries match");
  // Busy while it counted, never disabled: focus is still on Preview, not back at the top of the page.
  await expect(page.getByRole("button", { name: "Preview", exact: true })).toBeFocused();
  await expect(page.getByRole("table")).toContainText(`evt_rd_${run}_0`);
  const start = page.getByRole("button", { name: "Redrive 6 deliveries" });
  await expect(start).toBeDisabled(); // no reason yet
  await page.getByLabel("Reason (incident or ticket id)").fill(`INC-${run} Jefferson importer fixed`);
  await page.getByLabel("Rate (deliveries/s)").fill("5");
  await shot(page, "redrive-preview");
  await start.click();
  const dialog = page.getByRole("alertdialog");
  // The time it names is the pacer's, to queue them; the endpoint's pace decides when each is sent.
  await expect(dialog).toContainText("Send 6 deliveries again at 5/s (all queued in about 2 s; each is sent as fast as its endpoint takes it)");
  await dialog.getByRole("button", { name: "Yes, redrive 6 deliveries" }).click();

  await expect(page).toHaveURL(/\/redrives\/rdb_/);
  await expect(page.getByRole("heading", { name: "Redrive of 6 deliveries" })).toBeVisible();
  await expect(page.getByTestId("batch-status")).toHaveText("Done", { timeout: 30_000 });
  await expect(page.getByTestId("stat-redriven")).toHaveText("6");
  await expect(page.getByTestId("stat-delivered-since")).toHaveText("6", { timeout: 30_000 });
  await expect(page.getByTestId("stat-failed-again")).toHaveText("0");
  await shot(page, "redrive-done");
  const batchId = page.url().split("/").pop()!;

  // Same webhook-id both times: each delivery key was seen twice (the 422, then the 204).
  const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}`, undefined, "support");
  for (const d of r.json.items) {
    expect(d.state).toBe("delivered");
    expect(seen.get(d.deliveryKey)).toBe(2);
  }

  // The batches list and the audit log name it.
  await page.goto("/redrives");
  await expect(page.getByRole("row").filter({ hasText: batchId })).toContainText("Done");
  await page.goto(`/audit?targetId=${batchId}`);
  const row = page.getByRole("row").filter({ hasText: "redrive.create" });
  await expect(row).toContainText(`INC-${run} Jefferson importer fixed`);
  await expect(row).toContainText("6 deliveries");
  await shot(page, "redrive-audit");
});

test("an engineer cancels a running redrive part-way from its page", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: `sub_cancel_${run}`,
    name: `Madison ${run}`,
    url: "http://127.0.0.1:9/hooks",
    eventTypes: ["assignment.graded"],
    tenant: `madison_${run}`,
  });
  for (let i = 0; i < 30; i++) {
    const ev = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: `evt_cx_${run}_${i}`, type: "assignment.graded", data: {}, subject: { tenant: `madison_${run}` } },
      "producer",
    );
    await settleDelivery(deliveryFor(ev, sub.json.id), [{ minutesAgo: 20, status: 500, errorClass: "http_5xx", outcome: "dead_letter", ms: 30 }], {
      reason: "exhausted",
    });
  }
  const b = await api(request, "POST", "/api/v1/redrives", { reason: `INC-${run} slow`, ratePerSecond: 1, filter: { subscriptionId: sub.json.id } }, "engineer");
  expect(b.status).toBe(201);
  expect(b.json.matched).toBe(30);

  await signIn(page, "engineer");
  await page.goto(`/redrives/${b.json.id}`);
  await expect(page.getByTestId("batch-status")).toContainText("Running");
  // By keyboard: the question takes focus as it opens, and the pressed button keeps it while the cancel is on its way
  // (held for a second here), busy rather than disabled.
  // Live once React has hydrated the page (disabled until then): a focus before that lands nowhere.
  await expect(page.getByRole("button", { name: "Cancel this redrive…" })).toBeEnabled();
  await page.getByRole("button", { name: "Cancel this redrive…" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("alertdialog")).toBeFocused();
  // Escape gives focus back to the button that asked.
  await page.keyboard.press("Escape");
  await expect(page.getByRole("button", { name: "Cancel this redrive…" })).toBeFocused();
  await page.keyboard.press("Enter");
  await page.getByLabel("Why (optional)").fill("district asked us to wait");
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route("**/api/v1/redrives/*/cancel", async (route) => {
    await held;
    await route.continue();
  });
  const yes = page.getByRole("button", { name: /^(Yes, cancel the redrive|Cancelling…)$/ });
  await yes.focus();
  await page.keyboard.press("Enter");
  await expect(yes).toHaveText("Cancelling…");
  await expect(yes).toHaveAttribute("aria-disabled", "true");
  await expect(yes).toBeFocused();
  await expect(page.getByRole("button", { name: "Keep it running" })).toHaveAttribute("aria-disabled", "true");
  await shot(page, "redrive-cancelling-1280");
  // A second press while busy sends nothing more.
  await page.keyboard.press("Enter");
  release();
  // Nothing listens on port 9: what the batch moved before the cancel keeps retrying, and the status says so.
  await expect(page.getByTestId("batch-status")).toHaveText(/^Cancelled(: \d+ still on their way)?$/);
  // The card is gone; focus is on the status that says the batch is cancelled, not back at the top of the page.
  await expect(page.getByTestId("batch-status")).toBeFocused();
  await page.unroute("**/api/v1/redrives/*/cancel");
  const redriven = Number(await page.getByTestId("stat-redriven").innerText());
  expect(redriven).toBeLessThan(30);
  await expect(page.getByTestId("batch-status")).toHaveText(redriven > 0 ? `Cancelled: ${redriven} still on their way` : "Cancelled");
  await expect(page.getByTestId("stat-remaining")).toHaveText(String(30 - redriven));
  await expect(page.getByRole("button", { name: "Cancel this redrive…" })).toHaveCount(0);
});

/**
 * A district's endpoint that answers 422 until the district fixes it, then holds every request until the test answers:
 * `count` of its deliveries dead-lettered (the 422s), fixed, so what a redrive moves back is on its way until `answerAll`.
 */
async function heldEndpoint(request: APIRequestContext, o: { key: string; name: string; count: number }) {
  const run = Date.now().toString(36);
  const tenant = `${o.key}_${run}`;
  let fixed = false;
  let answering = false;
  const held: http.ServerResponse[] = [];
  const answer = (res: http.ServerResponse) => {
    res.statusCode = 204;
    res.end();
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (!fixed) {
        res.statusCode = 422;
        res.end('{"error":"term_id is required"}');
      } else if (answering) answer(res);
      else held.push(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  try {
    const sub = await api(request, "POST", "/api/v1/subscriptions", {
      id: `sub_${o.key}_${run}`,
      name: `${o.name} ${run}`,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
      eventTypes: ["assignment.graded"],
      tenant,
    });
    expect(sub.status, JSON.stringify(sub.json)).toBe(201);
    for (let i = 0; i < o.count; i++)
      expect(
        (await api(request, "POST", "/api/v1/events", { id: `evt_${o.key}_${run}_${i}`, type: "assignment.graded", data: { n: i }, subject: { tenant } }, "producer"))
          .status,
      ).toBe(202);
    await expect(async () => {
      const r = await api(request, "GET", `/api/v1/deliveries?subscriptionId=${sub.json.id}&state=dead_letter`, undefined, "support");
      expect(r.json.items).toHaveLength(o.count);
    }).toPass({ timeout: 30_000 });
    fixed = true;
    return {
      run,
      subscriptionId: sub.json.id as string,
      held: () => held.length,
      /** The endpoint answers what it holds now, and every later request at once. */
      answerAll: () => {
        answering = true;
        held.splice(0).forEach(answer);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

test("a redrive that queued everything faster than the endpoint takes it says what is still on its way, then Done", async ({ page, request }) => {
  test.setTimeout(120_000);
  const endpoint = await heldEndpoint(request, { key: "slowrd", name: "Polk SIS", count: 4 });
  try {
    const b = await api(
      request,
      "POST",
      "/api/v1/redrives",
      { reason: `INC-${endpoint.run} fast`, ratePerSecond: 100, filter: { subscriptionId: endpoint.subscriptionId } },
      "engineer",
    );
    expect(b.status).toBe(201);

    await signIn(page, "engineer");
    await page.goto(`/redrives/${b.json.id}`);
    // Every item is back in the queue, so the pacer is done; none has been answered yet.
    await expect(page.getByTestId("stat-redriven")).toHaveText("4", { timeout: 15_000 });
    await expect(page.getByTestId("batch-status")).toHaveText("Done: 4 still on their way");
    await expect(page.getByText("100% handled at")).toContainText("4 still on their way (queued, being sent or retrying");
    await shot(page, "redrive-done-sending");
    // The list says the same of it, in a running batch's colours, not a plain Done.
    await page.goto("/redrives");
    const row = page.getByTestId("batch-row").filter({ hasText: b.json.id });
    await expect(row.getByTestId("batch-status")).toHaveText("Done: 4 still on their way");
    await expect(row.getByTestId("batch-status")).toHaveClass(/bg-sky-100/);
    await expect.poll(endpoint.held, { timeout: 15_000 }).toBeGreaterThan(0);
    endpoint.answerAll();
    // The open list keeps polling while it is on its way, and says Done once all are delivered.
    await expect(row.getByTestId("batch-status")).toHaveText("Done", { timeout: 30_000 });
    await page.goto(`/redrives/${b.json.id}`);
    await expect(page.getByTestId("stat-delivered-since")).toHaveText("4", { timeout: 30_000 });
    await expect(page.getByTestId("batch-status")).toHaveText("Done");
  } finally {
    await endpoint.close();
  }
});

test("a cancelled redrive whose moved deliveries the endpoint has not answered yet says they are still on their way, then Cancelled", async ({ page, request }) => {
  test.setTimeout(120_000);
  // A struggling endpoint the engineer stops the redrive against.
  const endpoint = await heldEndpoint(request, { key: "cxslow", name: "Hamilton SIS", count: 10 });
  try {
    const b = await api(
      request,
      "POST",
      "/api/v1/redrives",
      { reason: `INC-${endpoint.run} runaway`, ratePerSecond: 1, filter: { subscriptionId: endpoint.subscriptionId } },
      "engineer",
    );
    expect(b.status).toBe(201);
    // A few are back in the queue, and the endpoint holds them: the engineer cancels the rest.
    await expect(async () => {
      const r = await api(request, "GET", `/api/v1/redrives/${b.json.id}`, undefined, "support");
      expect(r.json.redriven).toBeGreaterThanOrEqual(2);
    }).toPass({ timeout: 15_000 });
    const c = await api(request, "POST", `/api/v1/redrives/${b.json.id}/cancel`, { reason: "the endpoint is struggling" }, "engineer");
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    const moved: number = c.json.redriven;
    expect(moved).toBeLessThan(10);

    // Its page and the list say the moved ones are still being sent, in a cancelled batch's colours: it is not running.
    await signIn(page, "engineer");
    await page.goto(`/redrives/${b.json.id}`);
    await expect(page.getByTestId("batch-status")).toHaveText(`Cancelled: ${moved} still on their way`);
    await expect(page.getByTestId("batch-status")).toHaveClass(/bg-amber-100/);
    await expect(page.getByTestId("stat-remaining")).toHaveText(String(10 - moved));
    // The count's caption names the case in sight: held by the endpoint, they are being sent.
    await expect(page.getByTestId("stat-in-progress").locator("..")).toContainText("queued, being sent or retrying");
    // At a phone's width too, with no sideways scroll, while they are still on their way (the endpoint holds them).
    await bothWidths(page, "redrive-cancelled-on-their-way");
    await expect(page.getByTestId("batch-status")).toHaveText(`Cancelled: ${moved} still on their way`);
    await page.goto("/redrives");
    const row = page.getByTestId("batch-row").filter({ hasText: b.json.id });
    await expect(row.getByTestId("batch-status")).toHaveText(`Cancelled: ${moved} still on their way`);
    await expect(row.getByTestId("batch-status")).toHaveClass(/bg-amber-100/);
    await expect.poll(endpoint.held, { timeout: 15_000 }).toBeGreaterThan(0);
    endpoint.answerAll();
    // The open list keeps polling while they are on their way, and says Cancelled once all are delivered.
    await expect(row.getByTestId("batch-status")).toHaveText("Cancelled", { timeout: 30_000 });
    await page.goto(`/redrives/${b.json.id}`);
    await expect(page.getByTestId("stat-delivered-since")).toHaveText(String(moved), { timeout: 30_000 });
    await expect(page.getByTestId("batch-status")).toHaveText("Cancelled");
  } finally {
    await endpoint.close();
  }
});

test("a support user sees no redrive controls and the API refuses them (403)", async ({ page, request }) => {
  await signIn(page, "support");
  await page.goto("/redrives");
  await expect(page.getByRole("heading", { name: "Redrives" })).toBeVisible();
  await expect(page.getByRole("link", { name: "New redrive…" })).toHaveCount(0);
  // Not in the navigation: a support user cannot start one (a batch's own links still open the list).
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Redrives" })).toHaveCount(0);
  const r = await api(request, "POST", "/api/v1/redrives", { dryRun: true, filter: {} }, "support");
  expect(r.status).toBe(403);
});

test("the bulk redrive page's old address, /redrive, is a permanent redirect to /dlq/redrive that keeps the filter", async ({ page, request }) => {
  // Links in tickets, e-mails and bookmarks still carry the old address.
  const res = await request.get("/redrive?subscriptionId=sub_old_link&reason=exhausted", { maxRedirects: 0 });
  expect(res.status()).toBe(308);
  const to = new URL(res.headers()["location"], "http://localhost");
  expect(to.pathname + to.search).toBe("/dlq/redrive?subscriptionId=sub_old_link&reason=exhausted");

  await signIn(page, "engineer");
  await page.goto("/redrive?reason=exhausted");
  await expect(page).toHaveURL(/\/dlq\/redrive\?reason=exhausted$/);
  await expect(page.getByRole("heading", { name: "Redrive dead letters" })).toBeVisible();
  await expect(page.getByLabel("Dead-letter reason")).toHaveValue("exhausted");
  // It sits under Dead letters in the main navigation, beside the Redrives (batches) page.
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Dead letters" })).toHaveAttribute("aria-current", "page");
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "redrive-new-1280");
  // On a phone the form fits: a long subscription name no longer widens the page (it was 507 px with the old select).
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "redrive-new-390");
});

test("the redrive page offers the subscriptions that have dead letters, each with how many", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const made = async (id: string) =>
    expect(
      (await api(request, "POST", "/api/v1/subscriptions", { id, name: `Choice ${id}`, url: "http://127.0.0.1:9/hooks", eventTypes: [`choice.${run}`] })).status,
    ).toBe(201);
  const dead = `sub_choice_dead_${run}`;
  const clean = `sub_choice_clean_${run}`;
  await made(dead);
  await made(clean);
  await whilePaused(request, dead, async () => {
    const ev = await api(request, "POST", "/api/v1/events", { id: `evt_choice_${run}`, type: `choice.${run}`, data: {} }, "producer");
    await settleDelivery(deliveryFor(ev, dead), [{ minutesAgo: 3, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 40 }]);
  });
  await signIn(page, "engineer");
  await page.goto("/dlq/redrive");
  // A field that suggests as it is typed (a select of every such subscription was unusable at thousands).
  const field = page.getByRole("combobox", { name: /^Subscription/ });
  await expect(field).toBeVisible();
  // Part of the id: the subscription with dead letters is suggested with how many; the one without is not.
  await field.fill(run);
  const suggestions = page.locator(`datalist[id="${await field.getAttribute("list")}"]`);
  await expect(suggestions.locator(`option[value="${dead}"]`)).toHaveAttribute("label", `Choice ${dead} · 1 dead letter`);
  await expect(suggestions.locator(`option[value="${clean}"]`)).toHaveCount(0);
  // Chosen, the field says which and how many; the preview counts them.
  await field.fill(dead);
  await expect(page.getByTestId("subscription-help")).toHaveText(`Choice ${dead} · 1 dead letter`);
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByTestId("preview-count")).toContainText("1 delivery matches");
  // Nothing matches: said, not an empty list.
  await field.fill(`nothing_${run}`);
  await expect(page.getByTestId("subscription-help")).toContainText(`No subscription with dead letters matches “nothing_${run}”`);
});

test("the redrive confirmation takes the keyboard's focus, and Escape gives it back to the button", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const id = `sub_confirmkb_${run}`;
  expect(
    (await api(request, "POST", "/api/v1/subscriptions", { id, name: `Confirm kb ${run}`, url: "http://127.0.0.1:9/hooks", eventTypes: [`confirm.${run}`] })).status,
  ).toBe(201);
  await whilePaused(request, id, async () => {
    const ev = await api(request, "POST", "/api/v1/events", { id: `evt_confirmkb_${run}`, type: `confirm.${run}`, data: {} }, "producer");
    await settleDelivery(deliveryFor(ev, id), [{ minutesAgo: 3, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 40 }]);
  });
  await signIn(page, "engineer");
  await page.goto(`/dlq/redrive?subscriptionId=${id}`);
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByTestId("preview-count")).toContainText("1 delivery matches");
  await page.getByLabel("Reason (incident or ticket id)").fill(`INC-${run} importer fixed`);
  const start = page.getByRole("button", { name: "Redrive 1 delivery" });
  // Enabled once the preview asked for by the click above has answered (the page's own first one may answer earlier).
  await expect(start).toBeEnabled();
  await start.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("alertdialog");
  await expect(dialog).toContainText("Send 1 delivery again");
  expect(await page.evaluate(() => Boolean(document.activeElement?.closest('[role="alertdialog"]')))).toBe(true);
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(start).toBeFocused();
});

test("the Redrives page pages through every batch with Next and Previous, 100 a page", async ({ page }) => {
  // 101 finished batches from two days ago: older than every other spec's, so their lists keep their own at the top, and
  // older than any batch already there (an earlier run of this test), so the tag's 101st is the very oldest.
  const tag = `e2e-old-${Date.now().toString(36)}`;
  await e2eDb().query(
    `INSERT INTO redrive_batches (reason, actor, rate_per_second, status, created_at, updated_at, finished_at)
     SELECT $1 || ' ' || g, 'user:e2e', 10, 'done',
            LEAST(now() - interval '2 days', (SELECT min(created_at) - interval '1 minute' FROM redrive_batches)) - g * interval '1 minute',
            now(), now() - interval '2 days'
       FROM generate_series(1, 101) g`,
    [tag],
  );
  // Other specs' batches share this database: the page's own total, at least the 101.
  const total = (await e2eDb().query(`SELECT count(*)::int AS n FROM redrive_batches`)).rows[0].n as number;
  await signIn(page, "engineer");
  await page.goto("/redrives");
  await revealed(page);
  const rows = page.getByTestId("batch-row");
  await expect(rows).toHaveCount(100);
  await expect(page.getByTestId("batches-cut")).toHaveCount(0);
  const pager = page.getByRole("navigation", { name: "Batch pages" });
  await expect(pager.getByRole("link", { name: /Previous/ })).toHaveCount(0);
  const ids = rows.locator("a");
  const first = await ids.allInnerTexts();
  // Next until there is none: every batch once, the oldest (the tag's 101st) on the last page.
  const seen = [...first];
  const next = pager.getByRole("link", { name: /Next/ });
  await expect(next).toBeVisible();
  let pages = 1;
  while ((await next.count()) > 0) {
    await turnPage(page, "Next", ids);
    await expect(page).toHaveURL(/[?&]cursor=/);
    seen.push(...(await ids.allInnerTexts()));
    pages++;
  }
  expect(pages).toBe(Math.ceil(total / 100));
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen).toHaveLength(total);
  await expect(rows.filter({ hasText: `${tag} 101` })).toHaveCount(1);
  await expect(pager.getByRole("link", { name: /Previous/ })).toBeVisible();
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "redrives-last-page-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "redrives-last-page-390");
  // Previous goes back a page at a time to the newest.
  const previous = pager.getByRole("link", { name: /Previous/ });
  for (let back = 1; back < pages; back++) await turnPage(page, "Previous", ids);
  await expect(ids).toHaveText(first);
  await expect(previous).toHaveCount(0);
});

test("Resume deliveries on a paused subscription's note keeps the keyboard's focus: on the button while it runs, then on what it did", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const id = `sub_resumekb_${run}`;
  expect(
    (await api(request, "POST", "/api/v1/subscriptions", { id, name: `Resume kb ${run}`, url: "http://127.0.0.1:9/hooks", eventTypes: [`resumekb.${run}`] })).status,
  ).toBe(201);
  const pause = async () => expect((await api(request, "PATCH", `/api/v1/subscriptions/${id}`, { state: "paused", reason: "district maintenance" })).status).toBe(200);
  await pause();
  const ev = await api(request, "POST", "/api/v1/events", { id: `evt_resumekb_${run}`, type: `resumekb.${run}`, data: {} }, "producer");
  await settleDelivery(deliveryFor(ev, id), [{ minutesAgo: 3, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 40 }]);
  await signIn(page, "engineer");
  // The resume is held a moment, so what the button does while it runs can be seen.
  let release!: () => void;
  await page.route(`**/api/v1/subscriptions/${id}`, async (route) => {
    if (route.request().method() === "PATCH") await new Promise<void>((r) => (release = r));
    await route.continue();
  });
  const pressResume = async (note: ReturnType<typeof page.getByTestId>) => {
    const resume = note.getByRole("button", { name: /^(Resume deliveries|Resuming…)$/ });
    await expect(resume).toBeEnabled();
    await resume.focus();
    await page.keyboard.press("Enter");
    await expect(resume).toHaveText("Resuming…");
    await expect(resume).toHaveAttribute("aria-disabled", "true");
    await expect(resume).toBeFocused();
    release();
    await expect(resume).toHaveCount(0);
  };

  // Every subscription's dead letters: its are left out, in a note; resumed, the note says so and has the focus.
  await page.goto("/dlq/redrive");
  const left = page.getByTestId("held-subscription").filter({ hasText: id });
  await expect(left).toContainText(`Not included: 1 delivery on ${id}, which is paused.`);
  await pressResume(left);
  await expect(left).toContainText(`Not included: 1 delivery on ${id}, which was paused. It is resumed`);
  await expect(left.locator("p").first()).toBeFocused();

  // Its own dead letters: the preview is refused with the note; resumed, the note goes as the preview runs again, and
  // the focus is on the line that says what happened.
  await pause();
  await page.goto(`/dlq/redrive?subscriptionId=${id}`);
  const note = page.getByTestId("held-subscription");
  await expect(note).toContainText(`${id} is paused.`);
  await pressResume(note);
  await expect(page.getByTestId("preview-count")).toContainText("1 delivery matches");
  await expect(note).toHaveCount(0);
  const said = page.getByTestId("resumed-status");
  await expect(said).toHaveText(`${id} is resumed: its deliveries go out again, and the preview below counts its dead letters.`);
  await expect(said).toBeFocused();
  // The next Tab goes on into the page, not from its top.
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.closest("header, nav") === null)).toBe(true);
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "redrive-resumed-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "redrive-resumed-390");
});
