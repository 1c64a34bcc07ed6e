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

export function migrationsDir(): string {
  return path.resolve(/*turbopackIgnore: true*/ process.env.HOOKLEDGER_MIGRATIONS_DIR ?? path.join(process.cwd(), "prisma", "migrations"));
}

export type Migration = { name: string; sql: string; checksum: string };

export function listMigrations(dir = migrationsDir()): Migration[] {
  if (!fs.existsSync(/*turbopackIgnore: true*/ dir)) throw new Error(`Migrations folder ${dir} does not exist; run hookledger from the project root.`);
  return fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(/*turbopackIgnore: true*/ path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(/*turbopackIgnore: true*/ path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex") };
    });
}

const LOCK_ID = 7_431_001; // advisory lock: concurrent starters migrate one at a time

export async function migrate(url: string, opts: { dir?: string } = {}): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS _hookledger_migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ name: string; checksum: string }>("SELECT name, checksum FROM _hookledger_migrations");
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const m of listMigrations(opts.dir)) {
      const prior = done.get(m.name);
      if (prior) {
        if (prior !== m.checksum) throw new Error(`Migration ${m.name} was changed after it was applied. Add a new migration instead of editing an applied one.`);
        continue;
      }
      try {
        await client.query("BEGIN");
        await client.query(m.sql);
        await client.query("INSERT INTO _hookledger_migrations (name, checksum) VALUES ($1, $2)", [m.name, m.checksum]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`);
      }
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
    .map((m) => m.name)
    .filter((n) => !done.has(n));
}
