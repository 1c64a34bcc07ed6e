// Waiting for an external database at a worker's start. A worker started
// while Postgres is still coming up (a restart, a deploy, a database container
// that starts later) waits for it, as the worker already does for a database
// lost while it runs, instead of exiting; a database that answers with a
// mistake (wrong password, no such database) fails at once.
import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { Logger } from "pino";
import { explainConnectError } from "./check-url";

/** Node network errors that mean "not there yet", and Postgres's "starting up" / "shutting down" / "too many connections". */
const TRANSIENT_NET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND", "EPIPE"]);
const TRANSIENT_PG = new Set(["57P03", "57P01", "57P02", "53300"]);

function isTransientConnectError(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  if (code) return TRANSIENT_NET.has(code) || TRANSIENT_PG.has(code);
  // pg reports a socket closed mid-handshake without a code.
  return /Connection terminated|timeout expired/i.test((err as Error)?.message ?? "");
}

/** Retry delay after n consecutive database failures: 500 ms × 2^n, at most 30 s (the worker's too). */
export const dbBackoff = (n: number) => Math.min(30_000, 500 * 2 ** Math.min(n, 6));

/**
 * Resolves once `SELECT 1` succeeds. Transient failures are logged and retried
 * with backoff for as long as it takes; any other failure rejects. Resolves
 * `false` without connecting if `signal` aborts (a SIGTERM while waiting).
 */
export async function waitForDatabase(url: string, log: Logger, signal?: AbortSignal): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return false;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    client.on("error", () => {}); // a connection dropped after the check is not this function's concern
    try {
      await client.connect();
      await client.query("SELECT 1");
      if (attempt > 1) log.info({ attempts: attempt }, "database reachable; starting");
      return true;
    } catch (err) {
      if (!isTransientConnectError(err)) throw explainConnectError(err);
      const retryInMs = dbBackoff(attempt - 1); // 0.5 s doubling to 30 s
      log.warn({ err: (err as Error).message, code: (err as { code?: string }).code, retryInMs }, "database unavailable; waiting for it before starting");
      await sleep(retryInMs, undefined, { signal }).catch(() => {}); // an abort ends the sleep early
    } finally {
      await client.end().catch(() => {});
    }
  }
}
