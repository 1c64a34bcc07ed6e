// The reaper: every worker returns expired leases (a crashed or stalled
// worker's rows) to due, recording each abandoned attempt as ambiguous
// (docs/DESIGN.md invariant 8). SKIP LOCKED lets every worker run it at once.
import type pg from "pg";
import type { Logger } from "pino";
import { abandonLeases } from "../lib/ledger/sql/abandon-leases";

const BATCH = 1000;

/** Reaps until no expired lease is left; `onReaped` is called after each batch that returned rows. */
export async function reapExpiredLeases(pool: pg.Pool, log: Logger, onReaped: () => void): Promise<void> {
  try {
    for (;;) {
      const rows = await abandonLeases(pool, { errorClass: "lease_expired", limit: BATCH });
      if (rows.length > 0) {
        log.warn({ count: rows.length, owners: [...new Set(rows.map((r) => r.owner))] }, "reaped expired leases back to due");
        onReaped();
      }
      if (rows.length < BATCH) break;
    }
  } catch (err) {
    log.warn({ err: (err as Error).message }, "reaper: database unavailable");
  }
}
