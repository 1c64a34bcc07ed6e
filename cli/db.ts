import { startEmbedded, dataDir, type StartedEmbedded, type StopOptions } from "../lib/db/embedded";
import { migrate } from "../lib/db/migrate";
import { checkDatabaseUrl } from "../lib/db/check-url";

/** `server`: the embedded PostgreSQL, found or started (none with DATABASE_URL). */
export type CliDatabase = { url: string; embedded: boolean; owned: boolean; created: boolean; server?: StartedEmbedded; stop: (opts?: StopOptions) => Promise<void> };

/**
 * DATABASE_URL if set; otherwise the embedded server, found running or started
 * (and then owned by this process, which stops it when done).
 */
export async function openDatabase(opts: { quiet?: boolean } = {}): Promise<CliDatabase> {
  if (process.env.DATABASE_URL) return { url: checkDatabaseUrl(process.env.DATABASE_URL), embedded: false, owned: false, created: false, stop: async () => {} };
  const log = opts.quiet ? undefined : (m: string) => process.env.LOG_LEVEL === "debug" && console.error(`[postgres] ${m}`);
  const pg = await startEmbedded({ log });
  if (pg.owned && !opts.quiet) console.error(`Embedded ${pg.label} started (data in ${dataDir()}/postgres, port ${pg.info.port}).`);
  process.env.DATABASE_URL = pg.url;
  return { url: pg.url, embedded: true, owned: pg.owned, created: pg.created, server: pg, stop: pg.stop };
}

/** Runs `fn` against a migrated database, stopping an embedded server this process started. */
export async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const db = await openDatabase({ quiet: true });
  // A mistyped HOOKLEDGER_DATA_DIR would otherwise answer from an empty database as if it were the real one
  // ("The dead-letter queue is empty.").
  if (db.created)
    console.error(
      `hookledger: there was no database in ${dataDir()}; this is a new, empty one. Set HOOKLEDGER_DATA_DIR to the folder \`hookledger start\` uses, or DATABASE_URL.`,
    );
  try {
    await migrate(db.url);
    return await fn(db.url);
  } finally {
    if (db.owned) await db.stop();
  }
}
