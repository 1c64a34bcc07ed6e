// A retention run beside live traffic, on the month-partitioned ledger: six
// months of delivered work (RETENTION_LOAD_PER_MONTH events a month, one
// delivery and one attempt each; 10,000 by default), three of them past the
// policy, while the real worker drains fresh events published at a steady
// rate to a local receiver. The run must remove exactly the three months while
// every fresh delivery is still made. How late the drain runs during the run
// is a speed figure, so it is printed for the record (run time, rows, the
// drain's lateness before and during), not asserted: a shared machine's load
// moves it by seconds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { FAST, createSub, startReceiver, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import { publishEventStandalone } from "../../lib/events/publish";
import { ensurePartitions, monthStart } from "../../lib/ledger/sql/partitions";
import { runRetention } from "../../lib/retention/run-retention";

const PER_MONTH = Number(process.env.RETENTION_LOAD_PER_MONTH ?? 10_000);
let db: TestDb;
let receiver: Receiver;
let worker: { stop: () => Promise<unknown> };

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver((_req, res) => void ((res.statusCode = 204), res.end()));
  await createSub(db.pool, { id: "sub_live", url: `${receiver.url}/ok`, maxConcurrency: 20 });
  await ensurePartitions(db.pool, { from: monthStart(new Date(), -7) });
  // Six months back, mid-month: months -6..-4 are past 90 days, months -3..-1 are not (month -3 partly; only whole rows older than the cutoff go).
  for (let m = 1; m <= 6; m++) {
    const at = new Date(monthStart(new Date(), -m).getTime() + 10 * 86_400_000);
    await db.pool.query(
      `WITH ev AS (
         INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
         SELECT 'evt_m' || $1::int || '_' || g, 'assignment.graded', convert_to('{"n":' || g || '}', 'UTF8'), $2::timestamptz, NULL, '{}', '{}', $2::timestamptz + g * interval '1 second'
           FROM generate_series(1, $3::int) g RETURNING id, created_at),
       dl AS (
         INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, last_attempt_at, last_status_code, delivered_at, created_at, updated_at, event_at)
         SELECT hl_delivery_key('sub_live', ev.id), ev.id, 'sub_live', 'assignment.graded', 'delivered', 1, 1, ev.created_at, 200, ev.created_at, ev.created_at, ev.created_at, ev.created_at FROM ev
         RETURNING id, created_at)
       INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, worker_id, created_at)
       SELECT dl.id, 'sub_live', 1, 'scheduled', dl.created_at, 40, 'delivered', 200, 'w-seed', dl.created_at FROM dl`,
      [m, at, PER_MONTH],
    );
  }
  // As if the sampler had folded these attempts (their stats are not what this measures).
  await db.pool.query(
    "INSERT INTO dashboard_rollups (name, last_id) SELECT 'attempt_stats', max(id) FROM attempts ON CONFLICT (name) DO UPDATE SET last_id = EXCLUDED.last_id",
  );
  await db.pool.query("ANALYZE");
  const ac = new AbortController();
  const done = runWorker({ databaseUrl: db.url, ...FAST, signal: ac.signal });
  worker = { stop: async () => (ac.abort(), done) };
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await db?.close();
});

/** Publishes `n` events at `perSecond`, then waits for their deliveries; the lateness (delivered_at - created_at) of each, in ms. */
async function traffic(prefix: string, n: number, perSecond: number, during?: () => Promise<void>): Promise<number[]> {
  const publishing = (async () => {
    for (let i = 0; i < n; i++) {
      await publishEventStandalone(db.prisma, { id: `${prefix}_${i}`, type: "assignment.graded", data: { i } });
      await new Promise((r) => setTimeout(r, 1000 / perSecond));
    }
  })();
  await Promise.all([publishing, during?.()]);
  for (;;) {
    const { rows } = await db.pool.query(
      `SELECT count(*) FILTER (WHERE state <> 'delivered')::int AS open, array_agg(EXTRACT(EPOCH FROM delivered_at - created_at) * 1000) AS late
         FROM deliveries WHERE event_id LIKE $1`,
      [`${prefix}_%`],
    );
    if (rows[0].open === 0) return (rows[0].late as number[]).map(Number).sort((a, b) => a - b);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];

describe("a retention run beside the drain", () => {
  it("removes exactly the three expired months while the worker delivers every fresh event", async () => {
    const before = await traffic("evt_before", 200, 40);
    let ran: Awaited<ReturnType<typeof runRetention>> = null;
    let runMs = 0;
    const during = await traffic("evt_during", 400, 40, async () => {
      const t0 = Date.now();
      ran = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "test" });
      runMs = Date.now() - t0;
    });
    const r = ran as unknown as { deliveries: number; attempts: number; events: number; partitions: number };
    console.log(
      `retention-load: ${PER_MONTH}/month x 6 months; run ${runMs} ms removed deliveries=${r.deliveries} attempts=${r.attempts} events=${r.events} partitions=${r.partitions}; ` +
        `drain lateness before p50/p99/max ${p(before, 0.5).toFixed(0)}/${p(before, 0.99).toFixed(0)}/${before.at(-1)!.toFixed(0)} ms, ` +
        `during p50/p99/max ${p(during, 0.5).toFixed(0)}/${p(during, 0.99).toFixed(0)}/${during.at(-1)!.toFixed(0)} ms`,
    );
    expect(r.deliveries).toBeGreaterThanOrEqual(3 * PER_MONTH);
    expect(
      (await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_m4_%' OR event_id LIKE 'evt_m5_%' OR event_id LIKE 'evt_m6_%'")).rows[0].n,
    ).toBe(0);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_m1_%' OR event_id LIKE 'evt_m2_%'")).rows[0].n).toBe(2 * PER_MONTH);
    // traffic() returned: every fresh event published before and during the run was delivered.
    expect(before).toHaveLength(200);
    expect(during).toHaveLength(400);
  }, 600_000);
});
