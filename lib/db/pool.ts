// The raw `pg` pool: the driver of the ledger (every statement in lib/ledger:
// the worker's claims and result writes, the ingest, the read model behind the
// dashboard and the API). Prisma (./prisma.ts) serves the configuration tables
// (users, tokens, tenants, subscriptions, redrive batches, the audit log);
// docs/DESIGN.md, "Which driver for what".
import "server-only";
import pg from "pg";
import { databaseUrl } from "./url";

// bigint columns (attempt ids, counts) come back as JS numbers: they stay far
// below 2^53 and JSON cannot carry bigint.
pg.types.setTypeParser(20, (v) => Number(v));

const g = globalThis as unknown as { __hookledgerPool?: pg.Pool };

export function createPool(opts: { url?: string; max?: number; statementTimeoutMs?: number } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url ?? databaseUrl(),
    max: opts.max ?? 10,
    statement_timeout: opts.statementTimeoutMs,
  });
  // A dropped connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return pool;
}

/**
 * Ends the process's pool: the next getPool() opens one on DATABASE_URL as it
 * is then. For a process that works on one database after another (the bench);
 * the services read through getPool() whatever Prisma client they are given.
 */
export async function resetPool(): Promise<void> {
  const pool = g.__hookledgerPool;
  g.__hookledgerPool = undefined;
  await pool?.end().catch(() => {});
}

/**
 * How long one statement of a request may run before the server stops it (SQLSTATE 57014): the dashboard's and the
 * API's pool and Prisma client (docs/DESIGN.md, Scale). The API answers such a request with a 503 naming this limit.
 */
export const REQUEST_STATEMENT_TIMEOUT_MS = 10_000;

export function getPool(): pg.Pool {
  if (!g.__hookledgerPool) g.__hookledgerPool = createPool({ statementTimeoutMs: REQUEST_STATEMENT_TIMEOUT_MS });
  return g.__hookledgerPool;
}
