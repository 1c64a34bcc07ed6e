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
