// The channel that wakes the workers when deliveries become due: NOTIFYed by
// hl_enqueue_events (migration 0011; the SQL names it once, there), by a
// resume or a redrive, LISTENed to by every worker. Every TypeScript file
// names it through this constant.
import "server-only";
export const DELIVERIES_CHANNEL = "hookledger_deliveries";
