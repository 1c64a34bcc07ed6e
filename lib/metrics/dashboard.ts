// The dashboard process's registry, served at GET /metrics: HTTP API request
// metrics (per process, counters) and gauges derived from the ledger (the same
// in every dashboard process; see deploy/prometheus/README.md for the scrape
// model). Kept on globalThis: Next.js may load this module more than once in
// one server, and prom-client refuses a metric name registered twice.
import "server-only";
import client from "prom-client";
import type pg from "pg";
import { readLedgerSnapshot } from "./ledger";
import { logger } from "../log";

function create() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const r = [registry];
  return {
    registry,
    httpRequests: new client.Counter({
      name: "hookledger_http_requests_total",
      help: "HTTP API requests by method, route pattern and status.",
      labelNames: ["method", "route", "status"] as const,
      registers: r,
    }),
    httpDuration: new client.Histogram({
      name: "hookledger_http_request_duration_seconds",
      help: "HTTP API request duration by method and route pattern.",
      labelNames: ["method", "route"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: r,
    }),
    deliveries: new client.Gauge({
      name: "hookledger_deliveries",
      help: "Pending, scheduled, in-flight and dead-lettered deliveries by subscription and state, non-zero only (from trigger-maintained counts).",
      labelNames: ["subscription", "state"] as const,
      registers: r,
    }),
    dlqDepth: new client.Gauge({
      name: "hookledger_dlq_depth",
      help: "Dead-lettered deliveries per subscription, for subscriptions with any.",
      labelNames: ["subscription"] as const,
      registers: r,
    }),
    dlqDepthByReason: new client.Gauge({
      name: "hookledger_dlq_depth_by_reason",
      help: "Dead-lettered deliveries per subscription and dead-letter reason (non-empty groups only).",
      labelNames: ["subscription", "reason"] as const,
      registers: r,
    }),
    dlqOldestAge: new client.Gauge({
      name: "hookledger_dlq_oldest_age_seconds",
      help: "Age of the oldest dead-lettered delivery per subscription, for subscriptions with any.",
      labelNames: ["subscription"] as const,
      registers: r,
    }),
    subscriptions: new client.Gauge({
      name: "hookledger_subscriptions",
      help: "Subscriptions by state.",
      labelNames: ["state"] as const,
      registers: r,
    }),
    workerHeartbeatAge: new client.Gauge({
      name: "hookledger_worker_heartbeat_age_seconds",
      help: "Seconds since each running worker's last heartbeat (worker_heartbeats).",
      labelNames: ["worker"] as const,
      registers: r,
    }),
    newestHeartbeatAge: new client.Gauge({
      name: "hookledger_worker_newest_heartbeat_age_seconds",
      help: "Seconds since the newest heartbeat of any running worker; +Inf when there is none.",
      registers: r,
    }),
    oldestDueAge: new client.Gauge({
      name: "hookledger_oldest_due_age_seconds",
      help: "How long the oldest due delivery of an active subscription has waited to be claimed (0 when none).",
      registers: r,
    }),
    scrapeOk: new client.Gauge({
      name: "hookledger_ledger_scrape_success",
      help: "1 when the ledger gauges were read from the database in this scrape, 0 when the read failed.",
      registers: r,
    }),
    scrapeDuration: new client.Gauge({
      name: "hookledger_ledger_scrape_duration_seconds",
      help: "Time taken to read the ledger gauges.",
      registers: r,
    }),
  };
}

export type DashboardMetrics = ReturnType<typeof create>;
const g = globalThis as unknown as { __hookledgerDashboardMetrics?: DashboardMetrics };

export function dashboardMetrics(): DashboardMetrics {
  if (!g.__hookledgerDashboardMetrics) g.__hookledgerDashboardMetrics = create();
  return g.__hookledgerDashboardMetrics;
}

const LEDGER_GAUGES = [
  "deliveries",
  "dlqDepth",
  "dlqDepthByReason",
  "dlqOldestAge",
  "subscriptions",
  "workerHeartbeatAge",
  "newestHeartbeatAge",
  "oldestDueAge",
] as const;

/** Reads the ledger into the gauges and renders the registry in Prometheus text format. */
export async function renderDashboardMetrics(pool: pg.Pool): Promise<{ text: string; contentType: string }> {
  const m = dashboardMetrics();
  const t0 = performance.now();
  // Reset first: a subscription or worker that is gone must not keep its last value.
  for (const k of LEDGER_GAUGES) m[k].reset();
  try {
    const s = await readLedgerSnapshot(pool);
    for (const d of s.deliveries) m.deliveries.set({ subscription: d.subscription, state: d.state }, d.count);
    for (const d of s.dlq) {
      m.dlqDepth.set({ subscription: d.subscription }, d.depth);
      m.dlqOldestAge.set({ subscription: d.subscription }, d.oldestAgeSeconds);
    }
    for (const d of s.dlqByReason) m.dlqDepthByReason.set({ subscription: d.subscription, reason: d.reason || "none" }, d.depth);
    const byState = new Map<string, number>([
      ["active", 0],
      ["paused", 0],
      ["disabled", 0],
    ]);
    for (const sub of s.subscriptions) byState.set(sub.state, sub.count);
    for (const [state, n] of byState) m.subscriptions.set({ state }, n);
    for (const w of s.workers) m.workerHeartbeatAge.set({ worker: w.workerId }, w.ageSeconds);
    m.newestHeartbeatAge.set(s.newestHeartbeatAgeSeconds);
    m.oldestDueAge.set(s.oldestDueAgeSeconds);
    m.scrapeOk.set(1);
  } catch (err) {
    logger.warn({ err }, "could not read the ledger gauges for /metrics");
    // The API metrics and process metrics are still worth serving; the
    // HookledgerLedgerScrapeFailing rule pages on this gauge.
    m.scrapeOk.set(0);
  }
  m.scrapeDuration.set((performance.now() - t0) / 1000);
  return { text: await m.registry.metrics(), contentType: m.registry.contentType };
}
