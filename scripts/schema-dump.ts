// npm run schema:dump: migrates a fresh database (on DATABASE_URL's server, or
// a throwaway embedded PostgreSQL) and writes what it holds to prisma/schema.sql
// (lib/db/schema-dump.ts says what is in it). `--check` writes nothing and
// exits 1 when the file differs.
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { scratchServer } from "../lib/db/embedded";
import { migrate } from "../lib/db/migrate";
import { dumpSchema } from "../lib/db/schema-dump";

const target = path.resolve("prisma/schema.sql");
const check = process.argv.includes("--check");

const { url: adminUrl, stop } = await scratchServer("hookledger-schema-");
const name = `hl_schema_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const u = new URL(adminUrl);
u.pathname = `/${name}`;
let failed = false;
try {
  await migrate(u.toString());
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  const text = await dumpSchema(client);
  await client.end();
  if (check) {
    failed = !fs.existsSync(target) || fs.readFileSync(target, "utf8") !== text;
    console.log(failed ? "prisma/schema.sql differs from what the migrations produce: run npm run schema:dump" : "prisma/schema.sql is current");
  } else {
    fs.writeFileSync(target, text);
    console.log(`wrote ${path.relative(process.cwd(), target)} (${text.split("\n").length} lines)`);
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await stop();
}
process.exit(failed ? 1 : 0);
