// Whether an error says the database could not be reached (stopped, restarting,
// out of connections), as opposed to a fault in the request or the code. The
// API answers the first with a 503 and Retry-After instead of a 500, so a
// producer retries and an operator reads "the database" rather than "internal
// error"; the dashboard's error pages ask /api/health for the same verdict.
//
// Errors come three ways: pg's own (a network code, or a server FATAL such as
// 57P01 sent to every session at a fast shutdown), and Prisma's, which wraps
// the pg adapter's in `meta.driverAdapterError.cause` (kind
// "DatabaseNotReachable", or kind "postgres" with the SQLSTATE) or gives a
// P1xxx code of its own.
import "server-only";

/** Node network errors that mean "not there (now)". An API route's only other connections are the test sends, whose failures are results, not throws. */
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/** SQLSTATEs of a server going away or not taking sessions: admin/crash shutdown, cannot connect now, too many connections. */
const SERVER_GOING = new Set(["57P01", "57P02", "57P03", "53300"]);
/** Prisma's own: can't reach, timed out connecting, server closed the connection, no pool connection in time. */
const PRISMA = new Set(["P1001", "P1002", "P1017", "P2024"]);
/** The pg adapter's kinds for the same. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);

type Loose = { code?: unknown; message?: unknown; kind?: unknown; originalCode?: unknown; meta?: { driverAdapterError?: { cause?: Loose } }; cause?: Loose };

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as Loose;
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && (NETWORK.has(code) || SERVER_GOING.has(code) || PRISMA.has(code))) return true;
  const adapter = adapterCause(err);
  if (adapter) {
    if (typeof adapter.kind === "string" && ADAPTER_KINDS.has(adapter.kind)) return true;
    const sqlState = adapter.originalCode ?? adapter.code;
    if (typeof sqlState === "string" && SERVER_GOING.has(sqlState)) return true;
  }
  // pg reports a socket closed under a query, or a connect that timed out, without a code.
  return typeof e.message === "string" && /^(Connection terminated|timeout expired)/.test(e.message);
}

/**
 * Whether an error is a statement the server stopped at its statement_timeout (SQLSTATE 57014 "canceling statement due
 * to statement timeout"), from pg or through Prisma: a request asked for more than the database did in the time a
 * request has (REQUEST_STATEMENT_TIMEOUT_MS, lib/db/pool.ts). Not a fault in the code, nor a database that is down.
 */
export function isStatementTimeout(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as Loose;
  if (e.code === "57014") return typeof e.message === "string" && /statement timeout/.test(e.message);
  return adapterCause(err)?.originalCode === "57014";
}

/** The pg adapter's error under a Prisma error: a DriverAdapterError itself, or one wrapped by Prisma. */
export function adapterCause(err: object): Loose | undefined {
  const e = err as Loose;
  return e.meta?.driverAdapterError?.cause ?? ((err as Error).name === "DriverAdapterError" ? e.cause : undefined);
}
