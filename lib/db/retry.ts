// A transaction PostgreSQL rolled back as a deadlock victim (40P01) or for a
// serialization failure (40001) left nothing behind, so it may simply run
// again: the other side of the cycle has committed or is about to. The batch
// writers that share rows with the worker's result writes (ingest's groups,
// retention's batches, an erasure's chunks) retry through this.
import "server-only";
import { adapterCause } from "./unavailable";

const RETRYABLE_SQLSTATES = new Set(["40P01", "40001"]);
/** Prisma's code for either, when it maps the pg adapter's TransactionWriteConflict. */
const PRISMA_WRITE_CONFLICT = "P2034";

/** Whether the error is a deadlock or serialization failure, from pg, or through Prisma and its pg adapter. */
export function isRetryableTransactionError(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (RETRYABLE_SQLSTATES.has(code) || code === PRISMA_WRITE_CONFLICT)) return true;
  const sqlState = adapterCause(err)?.originalCode;
  return typeof sqlState === "string" && RETRYABLE_SQLSTATES.has(sqlState);
}

/**
 * Runs `transaction` (which must begin, commit or roll back a whole transaction of its own) up to `tries` times while it
 * fails as a deadlock victim or a serialization failure; any other error, or the last try's, is thrown.
 */
export async function retryTransaction<T>(transaction: () => Promise<T>, tries = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= tries || !isRetryableTransactionError(err)) throw err;
    }
  }
}
