// One PostgreSQL for the whole run: DATABASE_URL if set, otherwise a fresh
// embedded server in a temporary folder. A template database is migrated once;
// each test file clones it (graphile-worker's approach), so files are isolated.
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { scratchServer } from "../lib/db/embedded";
import { migrate } from "../lib/db/migrate";

declare module "vitest" {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
  }
}

export default async function setup(project: TestProject) {
  // A random server key for this run, inherited by every test process and every
  // process they spawn; the code itself has no test key (lib/auth/keys.ts).
  process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
  const { url: adminUrl, stop } = await scratchServer("hookledger-test-");
  const templateDb = `hl_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDb}`);
  await admin.query(`CREATE DATABASE ${templateDb}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${templateDb}`;
  await migrate(u.toString());

  project.provide("adminUrl", adminUrl);
  project.provide("templateDb", templateDb);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2", [`hl_t_${process.pid}_%`, templateDb]);
    for (const r of rows) await c.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`).catch(() => {});
    await c.end();
    await stop();
  };
}
