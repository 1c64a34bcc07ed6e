// prisma/schema.sql is what the migrations produce now, on every server the
// suite runs on (the embedded 18, and PostgreSQL 15 in npm test's second run).
import fs from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dumpSchema } from "../../lib/db/schema-dump";
import { createTestDatabase, type TestDb } from "../helpers/db";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

it("prisma/schema.sql is exactly what a fresh migrate produces (npm run schema:dump rewrites it)", async () => {
  const dumped = await dumpSchema(db.pool);
  const committed = fs.readFileSync("prisma/schema.sql", "utf8");
  if (dumped !== committed) {
    // The first differing line, so the failure says where without a 800-line diff.
    const a = committed.split("\n");
    const b = dumped.split("\n");
    const at = a.findIndex((line, i) => line !== b[i]);
    expect.fail(`prisma/schema.sql differs from the migrated schema at line ${at + 1}:\n  file:     ${a[at]}\n  migrated: ${b[at]}\nRun npm run schema:dump.`);
  }
});

it("sees a change: a new index or a function body edited by a later migration", async () => {
  await db.pool.query("CREATE INDEX schema_dump_probe ON tenants (name)");
  await db.pool.query("CREATE OR REPLACE FUNCTION hl_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$ SELECT prefix || 'x' $$");
  const dumped = await dumpSchema(db.pool);
  expect(dumped).toContain("CREATE INDEX schema_dump_probe ON public.tenants USING btree (name);");
  expect(dumped).toContain("SELECT prefix || 'x'");
  expect(dumped).not.toBe(fs.readFileSync("prisma/schema.sql", "utf8"));
});

it("leaves out month partitions, whose months depend on the day of the migration", async () => {
  await db.pool.query("SELECT hl_ensure_partition('events', '2031-05-10')");
  expect(await dumpSchema(db.pool)).not.toMatch(/_p\d{4}_\d{2}/);
});
