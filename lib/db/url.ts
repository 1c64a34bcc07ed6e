import "server-only";
import { checkDatabaseUrl } from "./check-url";
import { findRunningEmbedded } from "./embedded";

/**
 * The database URL for this process: DATABASE_URL, or the embedded server that
 * `hookledger start` (or another hookledger process) is running. Synchronous so
 * that module-level singletons can use it lazily.
 */
export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url) return checkDatabaseUrl(url);
  const found = findRunningEmbedded();
  if (found) return found;
  throw new Error(
    "No database: DATABASE_URL is not set and no embedded PostgreSQL is running under .data/. " +
      "Start hookledger with `npx hookledger start` (it starts the embedded database), or set DATABASE_URL.",
  );
}

/**
 * Whether this process's database is the embedded server under the data directory rather than an external
 * DATABASE_URL. `hookledger start` hands its dashboard the embedded server's URL as DATABASE_URL, so the URL alone
 * does not say: the running embedded server's does.
 */
export function usesEmbeddedDatabase(): boolean {
  const url = process.env.DATABASE_URL;
  return !url || findRunningEmbedded() === url;
}
