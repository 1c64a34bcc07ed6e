// The bench's own PostgreSQL: a fresh embedded server in a temporary folder
// (restarted once with pg_stat_statements preloaded, for the profiles), or,
// when DATABASE_URL is set, scratch databases on that server that are dropped
// at the end. Every scenario gets its own database cloned from a migrated
// template, so no scenario sees another's rows.
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { scratchDataDir, startEmbedded } from "../../lib/db/embedded";
import { migrate } from "../../lib/db/migrate";
import { resetPool } from "../../lib/db/pool";

pg.types.setTypeParser(20, (v) => Number(v));

export type BenchPg = {
  adminUrl: string;
  mode: "embedded" | "external";
  statStatements: boolean;
  /** A fresh migrated database; `name` must be unique within the run. */
  create: (name: string) => Promise<string>;
  drop: (url: string) => Promise<void>;
  info: () => Promise<Record<string, string>>;
  /** The server's postmaster pid, for CPU accounting: the embedded one's, or a DATABASE_URL server's on this machine (null elsewhere). */
  postmasterPid: () => number | null;
  close: () => Promise<void>;
};

function withDb(url: string, db: string) {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function adminQuery(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function openBenchPg(opts: { log?: (m: string) => void } = {}): Promise<BenchPg> {
  const log = opts.log ?? (() => {});
  const prefix = `hl_bench_${process.pid}_${randomBytes(2).toString("hex")}`;
  let adminUrl = process.env.DATABASE_URL;
  let stop = async () => {};
  let tmp: string | undefined;
  let mode: BenchPg["mode"] = "external";
  if (!adminUrl) {
    mode = "embedded";
    tmp = scratchDataDir("hookledger-bench-");
    let server = await startEmbedded({ dir: tmp });
    // Preload pg_stat_statements (it ships with the embedded binaries) so the
    // bench can say which statements the time went to. Needs a restart.
    try {
      await adminQuery(server.url, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
      // Nested statements too (the triggers' upserts), marked as such in the tables.
      await adminQuery(server.url, "ALTER SYSTEM SET pg_stat_statements.track = 'all'");
      await server.stop();
      server = await startEmbedded({ dir: tmp });
    } catch (err) {
      log(`pg_stat_statements unavailable: ${(err as Error).message}`);
    }
    adminUrl = server.url;
    stop = server.stop;
  }
  const admin = adminUrl;
  const template = `${prefix}_template`;
  await adminQuery(admin, `CREATE DATABASE ${template}`);
  const templateUrl = withDb(admin, template);
  await migrate(templateUrl);
  let statStatements = false;
  try {
    await adminQuery(templateUrl, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await adminQuery(templateUrl, "SELECT count(*) FROM pg_stat_statements");
    statStatements = true;
  } catch {
    statStatements = false;
  }
  const created: string[] = [template];
  // Where postmaster.pid is: ours, or the external server's when it runs on this machine and we may read its settings.
  let dataDir: string | null = tmp ? path.join(tmp, "postgres") : null;
  if (!dataDir)
    dataDir = await adminQuery(admin, "SHOW data_directory").then(
      (r) => r.rows[0].data_directory as string,
      () => null,
    );

  return {
    adminUrl: admin,
    mode,
    statStatements,
    async create(name) {
      const db = `${prefix}_${name}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
      await adminQuery(admin, `CREATE DATABASE ${db} TEMPLATE ${template}`);
      created.push(db);
      // The newest database is the process's DATABASE_URL: the services a scenario calls with its own Prisma client
      // (erasure, redrive, resolve, retention) read the ledger through the process's pool (lib/db/pool.ts getPool).
      const url = withDb(admin, db);
      process.env.DATABASE_URL = url;
      await resetPool();
      return url;
    },
    async drop(url) {
      const db = new URL(url).pathname.slice(1);
      await adminQuery(admin, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
    },
    postmasterPid() {
      if (!dataDir) return null;
      try {
        return Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]) || null;
      } catch {
        return null;
      }
    },
    async info() {
      const c = new pg.Client({ connectionString: templateUrl });
      await c.connect();
      try {
        const out: Record<string, string> = {};
        out.version = (await c.query("SHOW server_version")).rows[0].server_version;
        for (const s of ["synchronous_commit", "fsync", "shared_buffers", "max_connections", "work_mem", "wal_level"]) out[s] = (await c.query(`SHOW ${s}`)).rows[0][s];
        return out;
      } finally {
        await c.end();
      }
    },
    async close() {
      for (const db of created.reverse()) await adminQuery(admin, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
      await stop().catch(() => {});
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
