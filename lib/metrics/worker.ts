// Per-process worker metrics (prom-client). Each worker process exposes its own
// registry; Prometheus sums across processes (the scrape model is documented
// by the observability work). The worker calls these; it never reads them.
import "server-only";
import client from "prom-client";

export const workerRegistry = new client.Registry();

export const attemptsTotal = new client.Counter({
  name: "hookledger_attempts_total",
  help: "Delivery attempts by outcome and error class.",
  labelNames: ["subscription", "outcome", "error_class"] as const,
  registers: [workerRegistry],
});

export const attemptDuration = new client.Histogram({
  name: "hookledger_attempt_duration_seconds",
  help: "HTTP attempt duration.",
  labelNames: ["outcome"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
  registers: [workerRegistry],
});

export const schedulingLateness = new client.Histogram({
  name: "hookledger_scheduling_lateness_seconds",
  help: "Time between a delivery falling due and its attempt starting.",
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  registers: [workerRegistry],
});

export const claimBatchSize = new client.Histogram({
  name: "hookledger_claim_batch_size",
  help: "Deliveries claimed per claim query.",
  buckets: [0, 1, 5, 10, 25, 50, 100, 200, 500],
  registers: [workerRegistry],
});

export const workerHeartbeat = new client.Gauge({
  name: "hookledger_worker_heartbeat_timestamp_seconds",
  help: "Unix time of this worker's last heartbeat.",
  registers: [workerRegistry],
});
