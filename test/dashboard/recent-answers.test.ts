// The health list's last error and run of failures (findRecentAnswers): what each says on a subscription with a long
// history, and what a poll reads to say it. A subscription whose deliveries succeed costs a row or two a poll, not a
// walk of its newest 500 attempts (migration 0053, attempts_sub_failed): counted by the attempts rows the
// statement fetched, from the transaction's own statistics.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { findRecentAnswers } from "../../lib/ledger/read/endpoint-answers";

let db: TestDb;
const NOW = Date.now();

/** `n` attempts of one delivery of `sub`, one a second, the newest `endMinutesAgo` minutes ago: `outcome(i)` for the i-th (0 the oldest). */
async function attempts(sub: string, n: number, endMinutesAgo: number, outcome: string, status: number) {
  await seedEvent(db.pool, { id: `evt_${sub}_${endMinutesAgo}` });
  const id = await seedDelivery(db.pool, { subscriptionId: sub, eventId: `evt_${sub}_${endMinutesAgo}`, state: "delivered" });
  await db.pool.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, error_class, response_excerpt, worker_id)
     SELECT $1, $2, g, 'scheduled', $3::timestamptz - make_interval(secs => $4 - g), 5, $5, $6,
            CASE WHEN $5 = 'delivered' THEN NULL ELSE 'http_5xx' END, CASE WHEN $5 = 'delivered' THEN NULL ELSE 'down for maintenance ' || g END, 'w-test'
       FROM generate_series(1, $4::int) g`,
    [id, sub, minutesAgo(endMinutesAgo, NOW), n, outcome, status],
  );
}

/**
 * The attempts rows fetched (through an index, or scanned) while `fn` ran, in a transaction of its own on a new
 * connection: pg_stat_xact_user_tables also holds what earlier transactions of a connection have not flushed yet.
 */
async function rowsRead<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<{ out: T; fetched: number }> {
  const own = new pg.Pool({ connectionString: db.url, max: 1 });
  const c = await own.connect();
  try {
    await c.query("BEGIN");
    const out = await fn(c);
    const { rows } = await c.query<{ n: number }>(
      `SELECT coalesce(sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)), 0)::int AS n FROM pg_stat_xact_user_tables WHERE relname LIKE 'attempts%'`,
    );
    await c.query("COMMIT");
    return { out, fetched: rows[0].n };
  } finally {
    c.release();
    await own.end();
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const id of ["sub_healthy", "sub_down", "sub_flaky"]) await seedSubscription(db.pool, { id, name: id });
  // Healthy: one failure 3 hours ago, then 600 successes.
  await attempts("sub_healthy", 1, 180, "retry", 503);
  await attempts("sub_healthy", 600, 60, "delivered", 204);
  // Down: successes a day ago, then 700 failures.
  await attempts("sub_down", 50, 1440, "delivered", 204);
  await attempts("sub_down", 700, 30, "retry", 503);
  // Flaky: successes, then three failures in a row.
  await attempts("sub_flaky", 20, 120, "delivered", 204);
  await attempts("sub_flaky", 3, 10, "retry", 500);
  // The others' traffic, so the planner sees attempts as the large table it is.
  for (let i = 0; i < 20; i++) {
    await seedSubscription(db.pool, { id: `sub_other_${i}`, name: `other ${i}` });
    await attempts(`sub_other_${i}`, 2_000, 5 + i, i % 4 ? "delivered" : "retry", i % 4 ? 204 : 503);
  }
  await db.pool.query("ANALYZE attempts");
}, 60_000);

afterAll(async () => {
  await db?.close();
});

describe("the health list's last error and run of failures", () => {
  it("names the newest failure of the last 30 days, however many successes came after it", async () => {
    const [r] = await findRecentAnswers(db.pool, ["sub_healthy"], new Date(NOW));
    expect(r.started_at?.toISOString()).toBe(minutesAgo(180, NOW).toISOString());
    expect(r).toMatchObject({ status_code: 503, error_class: "http_5xx", message: "down for maintenance 1", run_attempts: 0, run_since: null });
    expect(r.last_ok_at?.toISOString()).toBe(minutesAgo(60, NOW).toISOString());
  });

  it("counts a run of failures since the last success, up to the newest 500 attempts", async () => {
    const [down, flaky] = await findRecentAnswers(db.pool, ["sub_down", "sub_flaky"], new Date(NOW));
    // 700 failures: the run is counted in the newest 500, none of them a success.
    expect(down).toMatchObject({ subscription_id: "sub_down", run_attempts: 500, last_ok_at: null, status_code: 503 });
    expect(down.started_at?.toISOString()).toBe(minutesAgo(30, NOW).toISOString());
    expect(down.run_since?.toISOString()).toBe(new Date(minutesAgo(30, NOW).getTime() - 499_000).toISOString());
    expect(flaky).toMatchObject({ subscription_id: "sub_flaky", run_attempts: 3, status_code: 500, message: "down for maintenance 3" });
    expect(flaky.run_since?.toISOString()).toBe(new Date(minutesAgo(10, NOW).getTime() - 2_000).toISOString());
    expect(flaky.last_ok_at?.toISOString()).toBe(minutesAgo(120, NOW).toISOString());
  });

  it("reads a few attempts for a subscription whose deliveries succeed, not its newest 500", async () => {
    const { out, fetched } = await rowsRead((c) => findRecentAnswers(c, ["sub_healthy"], new Date(NOW)));
    expect(out[0].status_code).toBe(503);
    // The newest success (one row), no run, and the newest failure by one probe of attempts_sub_failed.
    expect(fetched).toBeLessThanOrEqual(5);
  });
});
