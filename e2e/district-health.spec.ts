// A district manager sees red the minute the endpoint goes down. A real local
// endpoint answers 204, then 503 to everything: the district's card on the
// landing page, its row on Subscriptions and the subscription's page turn red
// with "Failing since …" and the last answer (its time and words, the status
// once) within a poll, while the 24 h rate stays as context; when the endpoint
// answers again, the red goes. The header names the district. Screens at
// 1,280 and 390 px.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { api, cli, deliveryFor, signIn, signInWith } from "./helpers";
import { bothWidths, closeE2eDb, e2eDb, settleDelivery } from "./dashboard-seed";

const run = Date.now().toString(36);
const D = { id: `district_${run}`, name: `Lincoln USD ${run}`, sub: `sub_dh_${run}`, subName: `Lincoln SIS ${run}` };
const manager = { email: `dh-manager-${randomBytes(3).toString("hex")}@example.test`, password: "" };
const OUTAGE = "Service Unavailable: gradebook maintenance until 08:00";

let receiver: http.Server;
let status = 204;

test.beforeAll(async ({ request }) => {
  test.setTimeout(120_000);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = status;
      res.end(status === 503 ? OUTAGE : undefined);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as AddressInfo).port;
  await cli(["tenant", "create", "--id", D.id, "--name", D.name]);
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id: D.sub,
    name: D.subName,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: D.id,
    retryPolicy: { ladderSeconds: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2], maxAttempts: 50 },
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  manager.password = (await cli(["user", "create", "--email", manager.email, "--role", "manager", "--tenant", D.id])).trim().split("\n").pop()!;
});

test.afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await closeE2eDb();
});

async function publish(request: Parameters<typeof api>[0], n: string, subscriptionId = D.sub) {
  const r = await api(
    request,
    "POST",
    "/api/v1/events",
    { id: `evt_dh_${run}_${n}`, type: "assignment.graded", data: { score: 91 }, subject: { tenant: D.id, studentId: `stu_dh_${run}` } },
    "producer",
  );
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  return deliveryFor(r, subscriptionId);
}

test("the district's card, list and page turn red with Failing since during an outage, and clear when it ends", async ({ page, request }) => {
  test.setTimeout(240_000);
  const delivered = await publish(request, "ok");
  await expect.poll(async () => (await api(request, "GET", `/api/v1/deliveries/${delivered}`)).json.state, { timeout: 30_000 }).toBe("delivered");

  await page.setViewportSize({ width: 1280, height: 900 });
  await signInWith(page, manager);
  await page.goto("/");
  // The header names the district, not its id.
  await expect(page.getByRole("heading", { name: `${D.name}: your endpoints` })).toBeVisible();
  const card = page.getByTestId("district-endpoint");
  await expect(card).toHaveCount(1);
  await expect(card).toHaveAttribute("data-failing", "false");
  await expect(card.getByTestId("failing-since")).toHaveCount(0);

  // The outage: every request answers 503 from now on.
  status = 503;
  for (let i = 0; i < 3; i++) await publish(request, `down${i}`);
  // Within the card's poll (15 s) after the first failed attempts.
  const failing = card.getByTestId("failing-since");
  await expect(failing).toBeVisible({ timeout: 45_000 });
  await expect(card).toHaveAttribute("data-failing", "true");
  await expect(failing).toContainText(/Failing since \d{2}:\d{2}:\d{2}/);
  await expect(failing).toContainText(`HTTP 503 “${OUTAGE}”`);
  await expect(failing).not.toContainText("503 HTTP 503");
  // The 24 h rate stays, as context.
  await expect(card.getByText("Success 24 h")).toBeVisible();
  await bothWidths(page, "district-health-card-failing");

  await page.goto("/subscriptions");
  const row = page.getByTestId("subscription-row").filter({ has: page.getByRole("link", { name: D.subName }) });
  await expect(row).toHaveAttribute("data-failing", "true");
  await expect(row.getByTestId("failing-since")).toContainText(/Failing since \d{2}:\d{2}:\d{2}/);
  await expect(row.getByTestId("last-answer")).toContainText("HTTP 503");
  await bothWidths(page, "district-health-list-failing");

  await page.goto(`/subscriptions/${D.sub}`);
  const onPage = page.getByTestId("failing-since");
  await expect(onPage).toBeVisible();
  await expect(onPage).toContainText(`Last answer: HTTP 503 “${OUTAGE}”`);
  await bothWidths(page, "district-health-page-failing");

  // The endpoint answers again: the retries are delivered and the red goes.
  status = 204;
  await page.goto("/");
  await expect(card).toHaveAttribute("data-failing", "false", { timeout: 60_000 });
  await expect(card.getByTestId("failing-since")).toHaveCount(0);
  await bothWidths(page, "district-health-card-recovered");
});

test("a redrive preview of a paused subscription's dead letters offers Resume deliveries, not an API call", async ({ page, request }) => {
  test.setTimeout(120_000);
  status = 204;
  const port = (receiver.address() as AddressInfo).port;
  const id = `sub_dh_held_${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Lincoln held ${run}`,
    url: `http://127.0.0.1:${port}/hooks`,
    eventTypes: ["assignment.graded"],
    tenant: D.id,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  // Paused, so the e2e worker leaves the seeded dead letters alone; it stays paused for the preview.
  expect((await api(request, "PATCH", `/api/v1/subscriptions/${id}`, { state: "paused", reason: "district maintenance" })).status).toBe(200);
  for (const n of ["h0", "h1"]) {
    const d = await publish(request, n, id);
    await settleDelivery(d, [{ minutesAgo: 10, status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 30, excerpt: "missing field term_id" }]);
  }

  await signIn(page, "engineer");
  await page.setViewportSize({ width: 1280, height: 900 });
  // Every dead letter: the paused subscription's are left out, in words, with the button.
  await page.goto("/dlq/redrive");
  const left = page.getByTestId("held-subscription").filter({ hasText: id });
  await expect(left).toContainText(`Not included: 2 deliveries on ${id}, which is paused.`);
  await expect(left.getByRole("button", { name: "Resume deliveries" })).toBeVisible();
  await expect(page.getByText("PATCH /api/v1")).toHaveCount(0);

  // Its own dead letters: the preview is refused (a redrive would only be held), and says so with Resume.
  await page.goto(`/dlq/redrive?subscriptionId=${id}`);
  const note = page.getByTestId("held-subscription");
  await expect(note).toContainText(`${id} is paused. A redrive would only be held: resume it first`);
  await expect(page.getByText("PATCH /api/v1")).toHaveCount(0);
  const resume = note.getByRole("button", { name: "Resume deliveries" });
  await expect(resume).toBeVisible();
  // The redrive page's own width at 390 px is e2e/phone.spec.ts's to assert: looked at here, not asserted.
  await bothWidths(page, "redrive-held-resume", { fits: false });

  // Resumed, the preview runs again and counts them.
  await resume.click();
  await expect(page.getByTestId("preview-count")).toContainText("2 deliveries match");
  await expect(page.getByTestId("held-subscription")).toHaveCount(0);
  // Two reasons, two names (docs/GLOSSARY.md): the ledger's in the sample, the operator's in the form.
  await expect(page.getByRole("columnheader", { name: "Dead-letter reason" })).toBeVisible();
  await expect(page.getByRole("columnheader", { name: "Reason", exact: true })).toHaveCount(0);
  await expect(page.getByLabel("Operator's reason (incident or ticket id)")).toBeVisible();
  expect((await api(request, "GET", `/api/v1/subscriptions/${id}`)).json.state).toBe("active");
  const audit = await e2eDb().query("SELECT actor, reason FROM audit_entries WHERE action = 'subscription.resume' AND target_id = $1", [id]);
  expect(audit.rows).toEqual([{ actor: expect.stringMatching(/^user:/), reason: "resumed to redrive its dead letters" }]);
});
