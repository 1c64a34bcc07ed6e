// Worker settings: options passed to runWorker win, then the environment, then
// the defaults. Bad values fail fast, naming the variable (docs/STYLE.md #12).
import { z } from "zod";
import type { LookupFunction } from "../lib/net/ssrf";
import { privateTargetsAllowed } from "../lib/net/ssrf";

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const ZWorkerEnv = z.object({
  HOOKLEDGER_WORKER_BATCH: int(1, 1000).default(200),
  HOOKLEDGER_WORKER_MAX_IN_FLIGHT: int(1, 10_000).default(1000),
  HOOKLEDGER_WORKER_PER_SUBSCRIPTION: int(1, 1000).default(100),
  HOOKLEDGER_WORKER_POLL_MS: int(10, 60_000).default(500),
  HOOKLEDGER_LEASE_SLACK_MS: int(100, 3_600_000).default(30_000),
  HOOKLEDGER_REAP_INTERVAL_MS: int(50, 600_000).default(5_000),
  HOOKLEDGER_HEARTBEAT_MS: int(100, 600_000).default(5_000),
  HOOKLEDGER_SHUTDOWN_GRACE_MS: int(0, 600_000).default(10_000),
  HOOKLEDGER_CONNECTIONS_PER_ORIGIN: int(1, 10_000).default(50),
});

export type WorkerOptions = {
  databaseUrl: string;
  workerId?: string;
  /** Deliveries per claim query (100–200 is the measured sweet spot). */
  batchSize?: number;
  /** Requests this process keeps on the wire at once. */
  maxInFlight?: number;
  /** At most this many rows of one subscription per claim, so one district cannot fill a batch. */
  perSubscription?: number;
  /** Fallback poll when no NOTIFY arrives; also bounds how late a scheduled retry fires. */
  pollIntervalMs?: number;
  /** Lease = the subscription's timeout + this. */
  leaseSlackMs?: number;
  reapIntervalMs?: number;
  heartbeatIntervalMs?: number;
  /** SIGTERM: in-flight requests get this long to finish; the rest are released. */
  shutdownGraceMs?: number;
  connectionsPerOrigin?: number;
  allowPrivateTargets?: boolean;
  /** Test seam: a DNS lookup (the SSRF guard still checks what it returns). */
  lookup?: LookupFunction;
  /** Test seam: the source of jitter. */
  random?: () => number;
  /** Handle SIGTERM/SIGINT (default true for runWorker). */
  handleSignals?: boolean;
};

export type WorkerConfig = Required<Omit<WorkerOptions, "workerId" | "lookup" | "random" | "handleSignals">> &
  Pick<WorkerOptions, "workerId" | "lookup" | "random" | "handleSignals">;

export function workerConfig(opts: WorkerOptions, env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = ZWorkerEnv.safeParse(env);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`Invalid worker setting ${String(i.path[0])}=${JSON.stringify(env[String(i.path[0])])}: ${i.message}. Unset it for the default.`);
  }
  const e = parsed.data;
  return {
    databaseUrl: opts.databaseUrl,
    workerId: opts.workerId,
    batchSize: opts.batchSize ?? e.HOOKLEDGER_WORKER_BATCH,
    maxInFlight: opts.maxInFlight ?? e.HOOKLEDGER_WORKER_MAX_IN_FLIGHT,
    perSubscription: opts.perSubscription ?? e.HOOKLEDGER_WORKER_PER_SUBSCRIPTION,
    pollIntervalMs: opts.pollIntervalMs ?? e.HOOKLEDGER_WORKER_POLL_MS,
    leaseSlackMs: opts.leaseSlackMs ?? e.HOOKLEDGER_LEASE_SLACK_MS,
    reapIntervalMs: opts.reapIntervalMs ?? e.HOOKLEDGER_REAP_INTERVAL_MS,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? e.HOOKLEDGER_HEARTBEAT_MS,
    shutdownGraceMs: opts.shutdownGraceMs ?? e.HOOKLEDGER_SHUTDOWN_GRACE_MS,
    connectionsPerOrigin: opts.connectionsPerOrigin ?? e.HOOKLEDGER_CONNECTIONS_PER_ORIGIN,
    allowPrivateTargets: opts.allowPrivateTargets ?? privateTargetsAllowed(env),
    lookup: opts.lookup,
    random: opts.random,
    handleSignals: opts.handleSignals,
  };
}
