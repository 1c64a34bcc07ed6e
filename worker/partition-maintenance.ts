// The month partitions of events and attempts kept ahead of time (lib/ledger/sql/partitions.ts):
// started by every worker process and by `hookledger start`, so the current month and the next two
// exist whichever of them runs; creating them is idempotent and safe beside one another.
import pg from "pg";
import type { Logger } from "pino";
import { databaseUrl } from "../lib/db/url";
import { startPartitionMaintenance } from "../lib/ledger/sql/partitions";
import { logger } from "../lib/log";

export function startPartitionKeeper(opts: { databaseUrl?: string; intervalMs?: number; log?: Logger } = {}): { stop: () => Promise<void> } {
  // Its own one-connection pool, idle most of the hour: it lets the process exit (allowExitOnIdle), and a
  // partition change waiting for its lock never holds one of the delivery loop's connections.
  const pool = new pg.Pool({ connectionString: opts.databaseUrl ?? databaseUrl(), max: 1, idleTimeoutMillis: 5_000, allowExitOnIdle: true });
  pool.on("error", () => {});
  const m = startPartitionMaintenance(pool, { intervalMs: opts.intervalMs, log: (opts.log ?? logger).child({ component: "partitions" }) });
  return {
    stop: async () => {
      await m.stop();
      await pool.end().catch(() => {});
    },
  };
}
