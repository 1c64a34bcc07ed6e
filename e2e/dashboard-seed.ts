// SQL against the e2e database for ledger states the worker would produce
// (seeded while the subscription is paused, so the e2e server's own worker
// leaves the rows alone): attempts, delivered, dead-lettered, and historical
// DLQ samples for the charts.
import pg from "pg";
import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { api, deliveryFor, revealed } from "./helpers";
import { findRunningEmbedded } from "../lib/db/embedded";
import { E2E_DATA_DIR } from "../playwright.config";

let pool: pg.Pool | undefined;

export function e2eDb(): pg.Pool {
  if (!pool) {
    const url = findRunningEmbedded(E2E_DATA_DIR);
    if (!url) throw new Error(`No e2e database is running under ${E2E_DATA_DIR}; run through \`npm run test:e2e\`.`);
    pool = new pg.Pool({ connectionString: url, max: 2 });
  }
  return pool;
}

export async function closeE2eDb() {
  await pool?.end();
  pool = undefined;
}

/**
 * The e2e server may run a real worker, which would attempt (and fail) our
 * deliveries before the SQL below settles them. Seed while the subscription is
 * paused (held deliveries are never claimed), then resume.
 */
export async function whilePaused(request: APIRequestContext, subscriptionId: string, seed: () => Promise<void>) {
  const path = `/api/v1/subscriptions/${subscriptionId}`;
  expect((await api(request, "PATCH", path, { state: "paused", reason: "e2e seeding" })).status).toBe(200);
  await seed();
  expect((await api(request, "PATCH", path, { state: "active" })).status).toBe(200);
}

/** A full-page screenshot for the README and for looking at (HOOKLEDGER_SCREENS_DIR, else test-results/screens). */
export async function shot(page: Page, name: string) {
  await revealed(page);
  await page.screenshot({ path: `${process.env.HOOKLEDGER_SCREENS_DIR ?? "test-results/screens"}/${name}.png`, fullPage: true });
}

/**
 * The page's screenshots at 1280 and 390 px wide, and (unless `fits` is false) no sideways scroll at 390. The width is
 * polled: a chart sized by a ResizeObserver is still at its 1280 px width for a moment after the viewport narrows.
 */
export async function bothWidths(page: Page, name: string, { fits = true }: { fits?: boolean } = {}) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  if (fits)
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth), { message: `${name}: no sideways scroll at 390 px` }).toBeLessThanOrEqual(390);
  await shot(page, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

type Attempt = {
  minutesAgo: number;
  status: number | null;
  errorClass?: string | null;
  outcome: "delivered" | "retry" | "dead_letter" | "abandoned";
  ms: number;
  excerpt?: string;
};

/** Records attempts on a delivery and moves it to the state the last one implies. */
export async function settleDelivery(deliveryId: string, attempts: Attempt[], opts: { reason?: string } = {}) {
  const db = e2eDb();
  const { rows } = await db.query("SELECT subscription_id FROM deliveries WHERE id = $1", [deliveryId]);
  const sub = rows[0].subscription_id;
  let n = 0;
  for (const a of attempts) {
    n++;
    await db.query(
      `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, error_class, error_message, response_excerpt, worker_id)
       VALUES ($1, $2, $3, 'scheduled', now() - make_interval(mins => $4), $5, $6, $7, $8, $9, $9, 'e2e-worker')`,
      [deliveryId, sub, n, a.minutesAgo, a.ms, a.outcome, a.status, a.errorClass ?? null, a.excerpt ?? null],
    );
  }
  const last = attempts[attempts.length - 1];
  const state = last.outcome === "delivered" ? "delivered" : last.outcome === "dead_letter" ? "dead_letter" : "scheduled";
  await db.query(
    `UPDATE deliveries SET state = $2, attempt_count = $3, total_attempts = $3,
       last_attempt_at = now() - make_interval(mins => $4), last_status_code = $5, last_error_class = $6, last_error_message = $7,
       delivered_at = CASE WHEN $2 = 'delivered' THEN now() - make_interval(mins => $4) END,
       dead_lettered_at = CASE WHEN $2 = 'dead_letter' THEN now() - make_interval(mins => $4) END,
       dead_letter_reason = CASE WHEN $2 = 'dead_letter' THEN $8 END,
       next_attempt_at = now() + interval '10 minutes'
     WHERE id = $1`,
    [
      deliveryId,
      state,
      attempts.length,
      last.minutesAgo,
      last.status,
      state === "delivered" ? null : (last.errorClass ?? null),
      state === "delivered" ? null : (last.excerpt ?? null),
      opts.reason ?? "permanent",
    ],
  );
}

/** Historical DLQ samples (what the sampler would have recorded over the last hours). */
export async function seedDlqHistory(points: { minutesAgo: number; depth: number; oldestMinutes: number }[]) {
  const db = e2eDb();
  for (const p of points) {
    await db.query(
      `INSERT INTO dlq_samples (sampled_at, depth, oldest_at) VALUES (now() - make_interval(mins => $1), $2, now() - make_interval(mins => $1 + $3))
       ON CONFLICT DO NOTHING`,
      [p.minutesAgo, p.depth, p.oldestMinutes],
    );
  }
}

/**
 * Settles every queued delivery of a (paused) subscription as delivered `minutesAgo`, each with its one attempt:
 * what the worker leaves after a busy hour, in two statements however many there are.
 */
export async function settleAllDelivered(subscriptionId: string, minutesAgo: number) {
  const db = e2eDb();
  await db.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, worker_id)
     SELECT id, subscription_id, 1, 'scheduled', now() - make_interval(mins => $2), 15, 'delivered', 200, 'e2e-worker'
       FROM deliveries WHERE subscription_id = $1 AND state = 'pending'`,
    [subscriptionId, minutesAgo],
  );
  await db.query(
    `UPDATE deliveries SET state = 'delivered', attempt_count = 1, total_attempts = 1, last_status_code = 200,
       last_attempt_at = now() - make_interval(mins => $2), delivered_at = now() - make_interval(mins => $2)
     WHERE subscription_id = $1 AND state = 'pending'`,
    [subscriptionId, minutesAgo],
  );
}

/**
 * One of each thing the route list's detail pages show, for the walks of every page: a subscription of `tenant` named
 * `name`, one delivery of it (event `eventId`, for student `studentId`) settled by `attempts` into the dead-letter
 * queue as `reason`, and a redrive batch of it (an admin's, at 1/s, `incident` its reason). The ids come back by the
 * route each fills in ("/deliveries/[id]", "/subscriptions/[id]", "/redrives/[id]").
 */
export async function seedDetailPages(
  request: APIRequestContext,
  o: { tenant: string; name: string; eventId: string; studentId: string; attempts: Attempt[]; reason: string; incident: string },
): Promise<{ subscriptionId: string; deliveryId: string; batchId: string; ids: Record<string, string> }> {
  const sub = await api(request, "POST", "/api/v1/subscriptions", {
    name: o.name,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: o.tenant,
  });
  expect(sub.status, JSON.stringify(sub.json)).toBe(201);
  let deliveryId = "";
  await whilePaused(request, sub.json.id, async () => {
    const published = await api(
      request,
      "POST",
      "/api/v1/events",
      { id: o.eventId, type: "assignment.graded", data: { score: 9 }, subject: { tenant: o.tenant, studentId: o.studentId } },
      "producer",
    );
    expect(published.status).toBe(202);
    deliveryId = deliveryFor(published, sub.json.id);
    await settleDelivery(deliveryId, o.attempts, { reason: o.reason });
  });
  const batch = await api(request, "POST", "/api/v1/redrives", { filter: { subscriptionId: sub.json.id }, reason: o.incident, ratePerSecond: 1 }, "admin");
  expect(batch.status, JSON.stringify(batch.json)).toBe(201);
  return {
    subscriptionId: sub.json.id,
    deliveryId,
    batchId: batch.json.id,
    ids: { "/deliveries/[id]": deliveryId, "/subscriptions/[id]": sub.json.id, "/redrives/[id]": batch.json.id },
  };
}
