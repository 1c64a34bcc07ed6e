// GET /metrics after a known scenario exposes exactly the seeded counts, and
// the counts stay exact through updates, deletes and folding. Per-subscription
// series are those of subscriptions with something queued or dead-lettered:
// idle subscriptions add none, however many there are.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import * as metrics from "../../app/metrics/route";
import { foldDeliveryCounts } from "../../lib/metrics/ledger";
import { parseProm, sample } from "../helpers/prom";

// This file scrapes /metrics without a token; metrics are closed by default (lib/metrics/token.ts).
process.env.HOOKLEDGER_METRICS_PUBLIC = "1";

let db: TestDb;

async function seedSubscription(id: string, opts: { tenant?: string; eventTypes?: string[]; state?: string } = {}) {
  await db.pool.query("INSERT INTO subscriptions (id, name, tenant, url, event_types, state) VALUES ($1, $1, $2, 'https://x.example.test/h', $3, $4)", [
    id,
    opts.tenant ?? null,
    opts.eventTypes ?? ["assignment.graded"],
    opts.state ?? "active",
  ]);
}

/** n events, each with one delivery to `sub` in `state` (dead letters with `reason`, dead-lettered `ageSeconds` ago). */
async function seedDeliveries(sub: string, n: number, state: string, opts: { reason?: string; ageSeconds?: number; prefix?: string } = {}) {
  const prefix = opts.prefix ?? `${sub}_${state}_${opts.reason ?? "x"}`;
  await db.pool.query(
    `WITH e AS (
       INSERT INTO events (id, type, payload, occurred_at)
       SELECT $2 || '_' || i, 'assignment.graded', '\\x7b7d'::bytea, now() FROM generate_series(1, $3::int) i
       RETURNING id, created_at)
     INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at, delivered_at, event_at)
     SELECT md5($1 || e.id), e.id, $1, 'assignment.graded', $4,
            CASE WHEN $4 = 'dead_letter' THEN $5 END,
            CASE WHEN $4 = 'dead_letter' THEN now() - make_interval(secs => $6) END,
            CASE WHEN $4 = 'delivered' THEN now() END,
            e.created_at
     FROM e`,
    [sub, prefix, n, state, opts.reason ?? null, opts.ageSeconds ?? 0],
  );
}

async function scrape() {
  const r = await call(metrics.GET, { path: "/metrics" });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/text\/plain; version=0\.0\.4/);
  return parseProm(r.text);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription("sub_lincoln", { tenant: "lincoln" });
  await seedSubscription("sub_jefferson", { tenant: "jefferson" });
  await seedSubscription("sub_paused", { state: "paused" });
  await seedDeliveries("sub_lincoln", 7, "delivered");
  await seedDeliveries("sub_lincoln", 3, "dead_letter", { reason: "exhausted", ageSeconds: 7200 });
  await seedDeliveries("sub_lincoln", 2, "dead_letter", { reason: "permanent", ageSeconds: 60 });
  await seedDeliveries("sub_jefferson", 4, "delivered");
  await seedDeliveries("sub_jefferson", 5, "pending");
  await seedDeliveries("sub_jefferson", 1, "scheduled");
});
afterAll(async () => db?.close());

describe("GET /metrics, ledger gauges", () => {
  it("exposes queued and dead-lettered deliveries by subscription and state, non-zero only", async () => {
    const s = await scrape();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_lincoln", state: "dead_letter" })).toBe(5);
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_lincoln", state: "pending" })).toBeUndefined();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "pending" })).toBe(5);
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "scheduled" })).toBe(1);
    // Delivered counts grow with the ledger for every subscription that ever received anything: not series.
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_lincoln", state: "delivered" })).toBeUndefined();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "delivered" })).toBeUndefined();
    expect(s.filter((x) => x.labels.subscription === "sub_paused")).toEqual([]);
  });

  it("exposes DLQ depth per subscription and reason, and the oldest age", async () => {
    const s = await scrape();
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_lincoln" })).toBe(5);
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_jefferson" })).toBeUndefined();
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_lincoln", reason: "exhausted" })).toBe(3);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_lincoln", reason: "permanent" })).toBe(2);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_jefferson", reason: "exhausted" })).toBeUndefined();
    const age = sample(s, "hookledger_dlq_oldest_age_seconds", { subscription: "sub_lincoln" })!;
    expect(age).toBeGreaterThanOrEqual(7200);
    expect(age).toBeLessThan(7260);
    expect(sample(s, "hookledger_dlq_oldest_age_seconds", { subscription: "sub_jefferson" })).toBeUndefined();
    expect(sample(s, "hookledger_subscriptions", { state: "active" })).toBe(2);
    expect(sample(s, "hookledger_subscriptions", { state: "paused" })).toBe(1);
    expect(sample(s, "hookledger_ledger_scrape_success", {})).toBe(1);
  });

  it("stays exact through state changes, a redrive, deletes and folding", async () => {
    // Two pending deliveries go in flight and are delivered, in two statements.
    await db.pool.query(
      "UPDATE deliveries SET state = 'in_flight' WHERE id IN (SELECT id FROM deliveries WHERE subscription_id = 'sub_jefferson' AND state = 'pending' ORDER BY id LIMIT 2)",
    );
    let s = await scrape();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "pending" })).toBe(3);
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "in_flight" })).toBe(2);
    await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE subscription_id = 'sub_jefferson' AND state = 'in_flight'");
    // A redrive of the permanent dead letters, and a change of reason.
    await db.pool.query("UPDATE deliveries SET state = 'pending', dead_letter_reason = NULL WHERE subscription_id = 'sub_lincoln' AND dead_letter_reason = 'permanent'");
    await db.pool.query(
      "UPDATE deliveries SET dead_letter_reason = 'gone' WHERE id = (SELECT id FROM deliveries WHERE dead_letter_reason = 'exhausted' ORDER BY id LIMIT 1)",
    );
    // A retention delete of one delivered row.
    await db.pool.query(
      "DELETE FROM deliveries WHERE id = (SELECT id FROM deliveries WHERE subscription_id = 'sub_lincoln' AND state = 'delivered' ORDER BY id LIMIT 1)",
    );
    // Several backends wrote counter rows; fold them and check nothing moved.
    const before = await db.pool.query("SELECT count(*)::int AS n FROM delivery_state_counts WHERE backend <> 0");
    expect(before.rows[0].n).toBeGreaterThan(0);
    expect(await foldDeliveryCounts(db.pool)).toBe(true);
    const after = await db.pool.query("SELECT count(*)::int AS n FROM delivery_state_counts WHERE backend <> 0");
    expect(after.rows[0].n).toBe(0);
    // The redriven permanent dead letters' group folded to zero and is gone, not kept as a zero row.
    const zeros = await db.pool.query("SELECT subscription_id, state, reason FROM delivery_state_counts WHERE n = 0");
    expect(zeros.rows).toEqual([]);

    s = await scrape();
    const truth = await db.pool.query<{ subscription_id: string; state: string; n: number }>(
      "SELECT subscription_id, state, count(*)::int AS n FROM deliveries WHERE state IN ('pending', 'scheduled', 'in_flight', 'dead_letter') GROUP BY 1, 2",
    );
    expect(truth.rows.length).toBeGreaterThan(2);
    for (const t of truth.rows)
      expect(sample(s, "hookledger_deliveries", { subscription: t.subscription_id, state: t.state }), `${t.subscription_id} ${t.state}`).toBe(t.n);
    expect(s.filter((x) => x.name === "hookledger_deliveries").length).toBe(truth.rows.length);
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "in_flight" })).toBeUndefined();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_lincoln", state: "pending" })).toBe(2);
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_lincoln" })).toBe(3);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_lincoln", reason: "exhausted" })).toBe(2);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_lincoln", reason: "gone" })).toBe(1);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_lincoln", reason: "permanent" })).toBeUndefined();
  });

  it("a rolled-back write leaves the counts as they were", async () => {
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "UPDATE deliveries SET state = 'dead_letter', dead_letter_reason = 'exhausted', dead_lettered_at = now() WHERE subscription_id = 'sub_jefferson' AND state = 'pending'",
      );
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const s = await scrape();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_jefferson", state: "pending" })).toBe(3);
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_jefferson" })).toBeUndefined();
  });

  it("reports worker heartbeat ages and the head of the due queue", async () => {
    let s = await scrape();
    expect(sample(s, "hookledger_worker_newest_heartbeat_age_seconds", {})).toBe(Infinity);
    await db.pool.query(
      `INSERT INTO worker_heartbeats (worker_id, hostname, pid, beat_at) VALUES
         ('w-fresh', 'h1', 1, now() - interval '2 seconds'), ('w-stale', 'h2', 2, now() - interval '90 seconds')`,
    );
    await db.pool.query("INSERT INTO worker_heartbeats (worker_id, hostname, pid, beat_at, stopped_at) VALUES ('w-stopped', 'h3', 3, now(), now())");
    await db.pool.query("UPDATE deliveries SET next_attempt_at = now() - interval '120 seconds' WHERE subscription_id = 'sub_jefferson' AND state = 'pending'");
    s = await scrape();
    expect(sample(s, "hookledger_worker_heartbeat_age_seconds", { worker: "w-fresh" })).toBeCloseTo(2, 0);
    expect(sample(s, "hookledger_worker_heartbeat_age_seconds", { worker: "w-stale" })).toBeCloseTo(90, 0);
    expect(sample(s, "hookledger_worker_heartbeat_age_seconds", { worker: "w-stopped" })).toBeUndefined();
    expect(sample(s, "hookledger_worker_newest_heartbeat_age_seconds", {})).toBeCloseTo(2, 0);
    const due = sample(s, "hookledger_oldest_due_age_seconds", {})!;
    expect(due).toBeGreaterThanOrEqual(120);
    expect(due).toBeLessThan(150);
  });

  it("requires the bearer token when HOOKLEDGER_METRICS_TOKEN is set", async () => {
    process.env.HOOKLEDGER_METRICS_TOKEN = "s3cret-metrics";
    try {
      expect((await call(metrics.GET, { path: "/metrics" })).status).toBe(401);
      expect((await call(metrics.GET, { path: "/metrics", token: "wrong" })).status).toBe(401);
      const ok = await call(metrics.GET, { path: "/metrics", token: "s3cret-metrics" });
      expect(ok.status).toBe(200);
      expect(ok.text).toContain("hookledger_deliveries");
    } finally {
      delete process.env.HOOKLEDGER_METRICS_TOKEN;
    }
  });

  it("idle subscriptions add no series: a thousand more with a delivered history change only the subscriptions gauge", async () => {
    const before = await scrape();
    const perSubscription = (x: typeof before) => x.filter((p) => p.labels.subscription !== undefined).map((p) => `${p.name}${JSON.stringify(p.labels)}=${p.value}`);
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, url, event_types) SELECT 'sub_idle_' || i, 'Idle ' || i, 'https://x.example.test/h', '{assignment.graded}'
         FROM generate_series(1, 1000) i`,
    );
    await db.pool.query(
      `WITH e AS (INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_idle_' || i, 'assignment.graded', '\\x7b7d'::bytea, now()
                    FROM generate_series(1, 1000) i RETURNING id, created_at)
       INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, delivered_at, event_at)
       SELECT md5(e.id), e.id, 'sub_idle_' || substr(e.id, 10), 'assignment.graded', 'delivered', now(), e.created_at FROM e`,
    );
    const after = await scrape();
    expect(perSubscription(after).filter((x) => !x.startsWith("hookledger_dlq_oldest_age_seconds"))).toEqual(
      perSubscription(before).filter((x) => !x.startsWith("hookledger_dlq_oldest_age_seconds")),
    );
    expect(after.filter((p) => p.labels.subscription?.startsWith("sub_idle_"))).toEqual([]);
    expect(sample(after, "hookledger_subscriptions", { state: "active" })).toBe(sample(before, "hookledger_subscriptions", { state: "active" })! + 1000);
  });

  it("still answers, with hookledger_ledger_scrape_success 0, when the database is gone", async () => {
    const { renderDashboardMetrics } = await import("../../lib/metrics/dashboard");
    const pg = (await import("pg")).default;
    const dead = new pg.Pool({ connectionString: "postgres://nobody:x@127.0.0.1:1/none", connectionTimeoutMillis: 500 });
    dead.on("error", () => {});
    const { text } = await renderDashboardMetrics(dead);
    await dead.end().catch(() => {});
    const s = parseProm(text);
    expect(sample(s, "hookledger_ledger_scrape_success", {})).toBe(0);
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_lincoln" })).toBeUndefined();
  });
});
