// The whole loop with the real worker: n deliveries delivered, m dead-lettered
// as permanent (422), one gone (410, subscription disabled). Then /metrics
// shows exactly those numbers, the worker's own endpoint counts the attempts,
// and hookledger's operational events reach the on-call receiver through the
// same worker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createSub, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import * as metrics from "../../app/metrics/route";
import { startMetricsServer, type MetricsServer } from "../../worker/metrics-server";
import type { DeliveryWorker } from "../../worker/worker";
import { parseProm, sample } from "../helpers/prom";

// This file scrapes /metrics without a token; metrics are closed by default (lib/metrics/token.ts).
process.env.HOOKLEDGER_METRICS_PUBLIC = "1";

const N = 6;
const M = 4;
let db: TestDb;
let w: DeliveryWorker;
let ms: MetricsServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const answer = (status: number) =>
    startReceiver((_q, res) => {
      res.statusCode = status;
      res.end(status === 422 ? '{"error":"missing term_id"}' : "");
    });
  const [ok, bad, gone, oncall] = await Promise.all([answer(204), answer(422), answer(410), answer(204)]);
  receivers.push(ok, bad, gone, oncall);
  await createSub(db.pool, { id: "sub_ok", url: ok.url });
  await createSub(db.pool, { id: "sub_bad", url: bad.url });
  await createSub(db.pool, { id: "sub_gone", url: gone.url });
  await createSub(db.pool, {
    id: "sub_oncall",
    url: oncall.url,
    eventTypes: ["hookledger.delivery.dead_lettered", "hookledger.subscription.disabled", "hookledger.subscription.recovered", "hookledger.dlq.threshold_exceeded"],
  });
  await seedEvents(db.pool, "evt_ok_", N, ["sub_ok"]);
  await seedEvents(db.pool, "evt_bad_", M, ["sub_bad"]);
  await seedEvents(db.pool, "evt_gone_", 1, ["sub_gone"]);
  ms = await startMetricsServer({ port: 0, host: "127.0.0.1", log: { info: () => {}, warn: () => {} } });
  w = worker(db.url);
});
afterAll(async () => {
  await w?.stop();
  await ms?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.close();
});

describe("a known scenario through the real worker", () => {
  it("settles: n delivered, m dead-lettered permanent, one gone and disabled, and the on-call receiver got the operational events", async () => {
    await waitFor(
      async () => {
        const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE state NOT IN ('delivered', 'dead_letter')");
        const ops = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_oncall' AND state = 'delivered'");
        return rows[0].n === 0 && ops.rows[0].n === M + 2;
      },
      30_000,
      "every delivery, operational ones included, to settle",
    );
    const oncall = receivers[3];
    const types = oncall.received.map((r) => JSON.parse(r.body.toString()).type).sort();
    expect(types).toEqual([...Array(M + 1).fill("hookledger.delivery.dead_lettered"), "hookledger.subscription.disabled"]);
    const dl = oncall.received.map((r) => JSON.parse(r.body.toString())).filter((b) => b.type === "hookledger.delivery.dead_lettered");
    expect(dl.filter((b) => b.data.subscriptionId === "sub_bad").map((b) => [b.data.reason, b.data.lastStatusCode])).toEqual(Array(M).fill(["permanent", 422]));
  });

  it("GET /metrics exposes exactly those numbers", async () => {
    const s = parseProm((await call(metrics.GET, { path: "/metrics" })).text);
    // Queued and dead-lettered deliveries only, non-zero only: every delivery settled, so sub_bad's dead letters are the one series.
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_bad", state: "dead_letter" })).toBe(M);
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_ok", state: "delivered" })).toBeUndefined();
    expect(sample(s, "hookledger_deliveries", { subscription: "sub_ok", state: "dead_letter" })).toBeUndefined();
    for (const sub of ["sub_ok", "sub_bad", "sub_gone", "sub_oncall"])
      for (const state of ["pending", "in_flight", "scheduled"]) expect(sample(s, "hookledger_deliveries", { subscription: sub, state })).toBeUndefined();
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_ok" })).toBeUndefined();
    expect(sample(s, "hookledger_dlq_depth", { subscription: "sub_bad" })).toBe(M);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_bad", reason: "permanent" })).toBe(M);
    expect(sample(s, "hookledger_dlq_depth_by_reason", { subscription: "sub_gone", reason: "gone" })).toBe(1);
    expect(sample(s, "hookledger_dlq_oldest_age_seconds", { subscription: "sub_bad" })).toBeLessThan(60);
    expect(sample(s, "hookledger_subscriptions", { state: "disabled" })).toBe(1);
    expect(sample(s, "hookledger_subscriptions", { state: "active" })).toBe(3);
    expect(sample(s, "hookledger_worker_newest_heartbeat_age_seconds", {})).toBeLessThan(5);
  });

  it("the worker's endpoint counts its attempts by outcome", async () => {
    const s = parseProm(await (await fetch(ms.url!)).text());
    const total = (sub: string, outcome: string) =>
      s.filter((x) => x.name === "hookledger_attempts_total" && x.labels.subscription === sub && x.labels.outcome === outcome).reduce((a, x) => a + x.value, 0);
    expect(total("sub_ok", "delivered")).toBe(N);
    expect(total("sub_bad", "dead_letter")).toBe(M);
    expect(total("sub_gone", "dead_letter")).toBe(1);
    expect(total("sub_oncall", "delivered")).toBe(M + 2);
    expect(sample(s, "hookledger_scheduling_lateness_seconds_count", {})).toBe(N + M + 1 + M + 2);
    expect(sample(s, "hookledger_claim_batch_size_sum", {})).toBe(N + M + 1 + M + 2);
  });
});
