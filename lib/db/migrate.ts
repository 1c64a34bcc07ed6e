// The migration runner: applies prisma/migrations/*/migration.sql in name
// order, each in its own transaction, recording name and checksum. Fails loudly:
// a failed migration rolls back and throws; a changed applied file is refused.
// (docs/PLATFORM.md: `prisma migrate deploy` cannot run offline and exits 0 having
// done nothing, so we do not use it.)
import "server-only";
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import pg from "pg";
import { explainConnectError } from "./check-url";
import { inTransaction } from "./client";

export function migrationsDir(): string {
  return path.resolve(/*turbopackIgnore: true*/ process.cwd(), "prisma", "migrations");
}

/**
 * A migration on disk. `superseded` holds the checksums of earlier texts of the
 * same migration (its folder's `superseded-checksums` file): a database that
 * recorded one of them applied that migration. For a text that was corrected
 * after release: a first text that cannot run on a supported server (0032
 * called a function PostgreSQL 15 lacks; 0034 brings the installs that ran it
 * to the current definition), or a comment that pointed outside the repository
 * (0002 to 0006) or at a section of BENCHMARKS.md that moved (0024 to 0033).
 * `formerly` holds earlier names of the folder (its `formerly` file), for a
 * migration renamed after release (0019a_erasure_guard was 0019_erasure_guard,
 * beside 0019_erasure): a database that recorded one of them applied it, and
 * keeps that record. A new name must sort where the old one did, since the
 * order is the names'. Anything else about an applied migration is changed by a
 * new one.
 */
export type Migration = { name: string; sql: string; checksum: string; superseded: string[]; formerly: string[] };

/** A folder's list file: one entry a line, `#` comments and blank lines left out. */
function listFile(file: string): string[] {
  if (!fs.existsSync(/*turbopackIgnore: true*/ file)) return [];
  return fs
    .readFileSync(/*turbopackIgnore: true*/ file, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

export function listMigrations(dir = migrationsDir()): Migration[] {
  if (!fs.existsSync(/*turbopackIgnore: true*/ dir)) throw new Error(`Migrations folder ${dir} does not exist; run hookledger from the project root.`);
  return fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(/*turbopackIgnore: true*/ path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(/*turbopackIgnore: true*/ path.join(dir, name, "migration.sql"), "utf8");
      const superseded = listFile(path.join(dir, name, "superseded-checksums")).filter((l) => /^[0-9a-f]{64}$/.test(l));
      const formerly = listFile(path.join(dir, name, "formerly"));
      return { name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex"), superseded, formerly };
    });
}

/** The name under which `done` (the tracking table's names) records `m`: its own, or one it had before. */
function recordedName(m: Migration, done: { has: (name: string) => boolean }): string | undefined {
  return [m.name, ...m.formerly].find((n) => done.has(n));
}

/** The oldest PostgreSQL major version every migration and statement runs on (CI tests 15 and the embedded 18). */
const MIN_SERVER_VERSION = 15;

/**
 * The one line that refuses a server older than MIN_SERVER_VERSION, or null.
 * `num` is server_version_num (150018 for 15.18), `version` server_version.
 */
export function serverVersionRefusal(num: number, version: string): string | null {
  if (num >= MIN_SERVER_VERSION * 10_000) return null;
  return `hookledger needs PostgreSQL ${MIN_SERVER_VERSION} or newer; this server is ${version.split(" ")[0]}.`;
}

/** Refuses a server older than MIN_SERVER_VERSION, before anything is written to it. */
async function checkServerVersion(client: pg.Client | pg.Pool): Promise<void> {
  const { rows } = await client.query<{ num: string; version: string }>(
    "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version",
  );
  const refusal = serverVersionRefusal(Number(rows[0].num), rows[0].version);
  if (refusal) throw new ServerVersionError(refusal);
}

class ServerVersionError extends Error {
  name = "ServerVersionError";
}

const LOCK_ID = 7_431_001; // advisory lock: concurrent starters migrate one at a time

export async function migrate(url: string, opts: { dir?: string } = {}): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  // The server going away mid-migration rejects the statement under way; without a listener it would also be an
  // unhandled 'error' event that ends the process before that error is reported.
  client.on("error", () => {});
  await client.connect().catch((err: unknown) => {
    throw explainConnectError(err);
  });
  const applied: string[] = [];
  try {
    await checkServerVersion(client);
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS _hookledger_migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ name: string; checksum: string }>("SELECT name, checksum FROM _hookledger_migrations");
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const m of listMigrations(opts.dir)) {
      const recorded = recordedName(m, done);
      if (recorded) {
        const prior = done.get(recorded);
        if (prior !== m.checksum && !m.superseded.includes(prior!))
          throw new Error(`Migration ${m.name} was changed after it was applied. Add a new migration instead of editing an applied one.`);
        continue;
      }
      await inTransaction(client, async () => {
        await client.query(m.sql);
        await client.query("INSERT INTO _hookledger_migrations (name, checksum) VALUES ($1, $2)", [m.name, m.checksum]);
      }).catch((err: Error) => {
        throw new Error(`Migration ${m.name} failed: ${err.message}`);
      });
      applied.push(m.name);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]).catch(() => {});
    await client.end();
  }
}

/** Names of migrations on disk that the database has not applied. */
export async function pendingMigrations(client: pg.Pool | pg.Client, dir?: string): Promise<string[]> {
  const exists = await client.query("SELECT to_regclass('_hookledger_migrations') AS t");
  const done = new Set<string>();
  if (exists.rows[0].t) {
    const { rows } = await client.query<{ name: string }>("SELECT name FROM _hookledger_migrations");
    rows.forEach((r) => done.add(r.name));
  }
  return listMigrations(dir)
    .filter((m) => !recordedName(m, done))
    .map((m) => m.name);
}
