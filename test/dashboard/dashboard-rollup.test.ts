// The hourly rollup (attempt_stats_hour, migration 0009) against the minute
// rows and the raw attempts: every hour row is the sum of its minute rows,
// every minute row the sum of its attempts, and the health list's 1 h and 24 h
// windows (whole hours from the hour table, the partial hour from minute rows)
// give exactly what the raw attempts give. Queue counts from the trigger-kept
// counters against counted rows, including the "10,000+" cap.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { rng } from "../../lib/random";
import { refreshHourlyStats, rollupAttemptStats } from "../../lib/rollups/sampler";
import { COUNT_CAP, findSubscriptionHealth } from "../../lib/dashboard/subscriptions";
import { LATENCY_BUCKETS, latencyBucket, quantileFromHistogram } from "../../lib/ledger/read/latency";

const HOUR = 3600_000;
// Mid-hour and in the past, so the 1 h and 24 h windows both start inside an hour.
const NOW = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR + 37.5 * 60_000);
const SUBS = ["sub_a", "sub_b", "sub_c"];
const OUTCOMES = ["delivered", "retry", "dead_letter", "abandoned"] as const;

type Stat = { attempts: number; delivered: number; retried: number; dead_lettered: number; abandoned: number; hist: number[] };
const empty = (): Stat => ({ attempts: 0, delivered: 0, retried: 0, dead_lettered: 0, abandoned: 0, hist: new Array(LATENCY_BUCKETS).fill(0) });
const pad = (h: number[] | null) => Array.from({ length: LATENCY_BUCKETS }, (_, i) => h?.[i] ?? 0);

let db: TestDb;
type RawAttempt = { sub: string; at: Date; ms: number | null; outcome: (typeof OUTCOMES)[number] };
const raw: RawAttempt[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const p = db.pool;
  for (const id of SUBS) await seedSubscription(p, { id, name: id, tenant: id === "sub_c" ? "other" : "rollup" });
  await seedEvent(p, { id: "evt_roll", subject: { tenant: "rollup" } });
  const deliveryOf = new Map<string, string>();
  for (const sub of SUBS) {
    const { rows } = await p.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, event_at)
       VALUES ($1, 'evt_roll', $2, 'assignment.graded', 'delivered', (SELECT created_at FROM event_keys WHERE id = 'evt_roll')) RETURNING id`,
      [deliveryKey(sub, "evt_roll"), sub],
    );
    deliveryOf.set(sub, rows[0].id);
  }
  // ~1,500 attempts per subscription over the last 27 hours, plus some on the
  // windows' edges (the first included and the last excluded second).
  const r = rng(9);
  const edges = [24 * HOUR, HOUR].flatMap((w) => [w, w + 1_000, w - 1_000, w - 30_000, w + 30_000, w + 60_000]);
  for (const sub of SUBS) {
    const offsets = [...edges, ...Array.from({ length: 1500 }, () => Math.floor(r() * 27 * HOUR))];
    for (const off of offsets) {
      const outcome = OUTCOMES[Math.floor(r() * (sub === "sub_b" ? 4 : 2.2))];
      raw.push({ sub, at: new Date(NOW.getTime() - off), ms: r() < 0.05 ? null : Math.floor(20 + 20_000 * r() ** 4), outcome });
    }
  }
  const n = raw.map((_, i) => i + 1);
  await p.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, worker_id)
     SELECT d, s, n, 'scheduled', t, ms, o, 'w-test'
     FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::text[]) AS x(d, s, n, t, ms, o)`,
    [raw.map((a) => deliveryOf.get(a.sub)), raw.map((a) => a.sub), n, raw.map((a) => a.at), raw.map((a) => a.ms), raw.map((a) => a.outcome)],
  );
});
afterAll(async () => db?.close());

/** What the rollup must hold, computed from the raw attempts in JS: bucket key -> stats. */
function expected(bucketMs: number): Map<string, Stat> {
  const out = new Map<string, Stat>();
  for (const a of raw) {
    const key = `${a.sub} ${Math.floor(a.at.getTime() / bucketMs) * bucketMs}`;
    const s = out.get(key) ?? empty();
    s.attempts++;
    if (a.outcome === "delivered") s.delivered++;
    else if (a.outcome === "retry") s.retried++;
    else if (a.outcome === "dead_letter") s.dead_lettered++;
    else s.abandoned++;
    if (a.ms !== null && a.outcome !== "abandoned") s.hist[latencyBucket(a.ms)]++;
    out.set(key, s);
  }
  return out;
}

async function table(name: "attempt_stats_minute" | "attempt_stats_hour"): Promise<Map<string, Stat>> {
  const { rows } = await db.pool.query(`SELECT * FROM ${name}`);
  return new Map(
    rows.map((r) => [
      `${r.subscription_id} ${new Date(r.bucket).getTime()}`,
      { attempts: r.attempts, delivered: r.delivered, retried: r.retried, dead_lettered: r.dead_lettered, abandoned: r.abandoned, hist: pad(r.latency_hist) },
    ]),
  );
}

describe("attempt_stats_hour", () => {
  it("a rollup in many small chunks: minute rows match the attempts, hour rows match both", async () => {
    // Chunks of 97 attempts: most hours are touched by several chunks, as a busy hour is by several sampler ticks.
    let folded = 0;
    for (let i = 0; i < 100; i++) {
      const n = await rollupAttemptStats(db.pool, { settleSeconds: 0, chunk: 97, maxChunks: 5 });
      folded += n;
      if (n === 0) break;
    }
    expect(folded).toBe(raw.length);
    expect(await table("attempt_stats_minute")).toEqual(expected(60_000));
    const hours = await table("attempt_stats_hour");
    expect(hours.size).toBeGreaterThanOrEqual(3 * 27);
    expect(hours).toEqual(expected(HOUR));
  });

  it("the migration's backfill and a full refresh give the same hour rows", async () => {
    const before = await table("attempt_stats_hour");
    const sql = fs.readFileSync("prisma/migrations/0009_attempt_stats_hour/migration.sql", "utf8");
    const backfill = sql.slice(sql.indexOf("INSERT INTO attempt_stats_hour"));
    await db.pool.query("DELETE FROM attempt_stats_hour");
    await db.pool.query(backfill);
    expect(await table("attempt_stats_hour")).toEqual(before);
    // A drifted hour row (written by something that did not know the hour table) is replaced, not added to.
    await db.pool.query("UPDATE attempt_stats_hour SET attempts = attempts + 5, latency_hist = '{}'");
    await refreshHourlyStats(db.pool, null);
    expect(await table("attempt_stats_hour")).toEqual(before);
  });

  it("the health list's 1 h and 24 h windows equal the raw attempts'", async () => {
    const health = await findSubscriptionHealth({ ids: SUBS, now: NOW });
    expect(health.map((h) => h.id).sort()).toEqual(SUBS);
    for (const h of health) {
      for (const [w, ms] of [
        ["h1", HOUR],
        ["h24", 24 * HOUR],
      ] as const) {
        // The rollup's window: every minute bucket at or after now - window.
        const since = NOW.getTime() - ms;
        const inWindow = raw.filter((a) => a.sub === h.id && Math.floor(a.at.getTime() / 60_000) * 60_000 >= since);
        const hist = new Array(LATENCY_BUCKETS).fill(0);
        for (const a of inWindow) if (a.ms !== null && a.outcome !== "abandoned") hist[latencyBucket(a.ms)]++;
        const delivered = inWindow.filter((a) => a.outcome === "delivered").length;
        expect(inWindow.length).toBeGreaterThan(0);
        expect(h[w]).toEqual({
          attempts: inWindow.length,
          delivered,
          successRate: delivered / inWindow.length,
          p50Ms: quantileFromHistogram(hist, 0.5),
          p95Ms: quantileFromHistogram(hist, 0.95),
        });
      }
      expect(h.counts.delivered24h).toBe(h.h24.delivered);
    }
  });
});

describe("queue counts from delivery_state_counts", () => {
  it("match counted rows; pending stops at COUNT_CAP + 1; the oldest dead letter across reasons", async () => {
    const p = db.pool;
    const n = COUNT_CAP + 50;
    await p.query(
      `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values)
       SELECT 'evt_q_' || g, 'assignment.graded', convert_to('{}', 'UTF8'), now(), '{}', '{}' FROM generate_series(1, $1::int) g`,
      [n],
    );
    // sub_a: a backlog above the cap; sub_c: a few of every state, dead letters with two reasons and none.
    await p.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, event_at)
       SELECT hl_delivery_key('sub_a', k.id), k.id, 'sub_a', 'assignment.graded', 'pending', k.created_at
       FROM generate_series(1, $1::int) g JOIN event_keys k ON k.id = 'evt_q_' || g`,
      [n],
    );
    await p.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at, event_at)
       SELECT hl_delivery_key('sub_c', k.id), k.id, 'sub_c', 'assignment.graded',
              (ARRAY['pending', 'scheduled', 'in_flight', 'dead_letter', 'delivered'])[1 + g % 5],
              CASE WHEN g % 5 = 3 THEN (ARRAY['permanent', 'exhausted', NULL])[1 + g % 3] END,
              CASE WHEN g % 5 = 3 THEN now() - make_interval(mins => g) END,
              k.created_at
       FROM generate_series(1, 40) g JOIN event_keys k ON k.id = 'evt_q_' || g`,
    );
    // A state change moves a count (the UPDATE trigger), as the worker's writes do.
    await p.query(`UPDATE deliveries SET state = 'scheduled' WHERE subscription_id = 'sub_c' AND state = 'pending' AND event_id IN ('evt_q_5', 'evt_q_10')`);
    const { rows } = await p.query(
      `SELECT subscription_id, count(*) FILTER (WHERE state = 'pending')::int AS pending, count(*) FILTER (WHERE state = 'scheduled')::int AS scheduled,
              count(*) FILTER (WHERE state = 'in_flight')::int AS in_flight, count(*) FILTER (WHERE state = 'dead_letter')::int AS dead_letter,
              min(dead_lettered_at) FILTER (WHERE state = 'dead_letter') AS oldest
       FROM deliveries GROUP BY 1`,
    );
    const counted = new Map(rows.map((r) => [r.subscription_id, r]));
    const health = await findSubscriptionHealth({ ids: SUBS, now: NOW });
    for (const h of health) {
      const c = counted.get(h.id);
      expect(h.counts).toMatchObject({
        pending: Math.min(c?.pending ?? 0, COUNT_CAP + 1),
        scheduled: Math.min(c?.scheduled ?? 0, COUNT_CAP + 1),
        inFlight: c?.in_flight ?? 0,
        deadLetter: c?.dead_letter ?? 0,
      });
      expect(h.dlqOldestAt).toBe(c?.oldest ? new Date(c.oldest).toISOString() : null);
    }
    const byId = new Map(health.map((h) => [h.id, h]));
    expect(byId.get("sub_a")!.counts.pending).toBe(COUNT_CAP + 1);
    expect(byId.get("sub_c")!.counts.deadLetter).toBe(8);
    expect(byId.get("sub_c")!.dlqOldestAt).not.toBeNull();
  });
});
