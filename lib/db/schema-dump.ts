// The schema a fresh `hookledger migrate` produces, as one readable file
// (prisma/schema.sql, written by `npm run schema:dump`, checked by
// test/database/schema-dump.test.ts). The migrations are history; this is what the SQL
// is now: each table with its columns, constraints and indexes, each function
// as PostgreSQL prints it back, each trigger.
//
// Read from the catalog rather than with pg_dump: the embedded PostgreSQL 18
// ships no pg_dump, and a pg_dump older than the server refuses to run, so the
// file would depend on which client a machine has. The catalog's own printers
// (pg_get_functiondef, pg_get_indexdef, pg_get_constraintdef, pg_get_triggerdef)
// give the same text on every supported server (15 to 18), which the test
// checks by running on both. Month partitions are left out: which months exist
// depends on the day the database was migrated (lib/retention/partitions.ts
// keeps them); the partitioned parents, their keys and default partitions stay.
import "server-only";
import type pg from "pg";

const MONTH_PARTITION = /_p\d{4}_\d{2}$/;

export async function dumpSchema(client: pg.Client | pg.Pool): Promise<string> {
  const out: string[] = [
    "-- The schema that `hookledger migrate` produces on a fresh database: what the SQL is now.",
    "-- Written by `npm run schema:dump` from the catalog (lib/db/schema-dump.ts); test/database/schema-dump.test.ts",
    "-- fails when the migrations produce anything else. Month partitions (<table>_pYYYY_MM) are left out.",
    "-- Edit the migrations, never this file.",
    "",
  ];

  const tables = await client.query<{
    oid: number;
    name: string;
    kind: string;
    partkey: string | null;
    parent: string | null;
    bound: string | null;
    reloptions: string[] | null;
  }>(
    `SELECT c.oid, c.relname AS name, c.relkind AS kind,
            CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partkey,
            p.relname AS parent, pg_get_expr(c.relpartbound, c.oid) AS bound, c.reloptions
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
       LEFT JOIN pg_class p ON p.oid = i.inhparent
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
      ORDER BY c.relname COLLATE "C"`,
  );
  const kept = tables.rows.filter((t) => !MONTH_PARTITION.test(t.name));

  for (const t of kept) {
    if (t.parent) {
      out.push(`CREATE TABLE ${t.name} PARTITION OF ${t.parent} ${t.bound};`, "");
      continue;
    }
    const cols = await client.query<{ name: string; type: string; notnull: boolean; def: string | null; identity: string; generated: string }>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
              pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity AS identity, a.attgenerated AS generated
         FROM pg_attribute a
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`,
      [t.oid],
    );
    // NOT NULL is printed with its column: PostgreSQL 18 also lists it as a constraint ('n'), 15 does not.
    const cons = await client.query<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS def
         FROM pg_constraint
        WHERE conrelid = $1 AND contype <> 'n'
        ORDER BY contype, conname COLLATE "C"`,
      [t.oid],
    );
    const lines = cols.rows.map((c) => {
      let line = `  ${c.name} ${c.type}`;
      if (c.generated === "s") line += ` GENERATED ALWAYS AS (${c.def}) STORED`;
      else if (c.identity) line += ` GENERATED ${c.identity === "a" ? "ALWAYS" : "BY DEFAULT"} AS IDENTITY`;
      else if (c.def !== null) line += ` DEFAULT ${c.def}`;
      if (c.notnull) line += " NOT NULL";
      return line;
    });
    for (const c of cons.rows) lines.push(`  CONSTRAINT ${c.name} ${c.def}`);
    let head = `CREATE TABLE ${t.name} (\n${lines.join(",\n")}\n)`;
    if (t.partkey) head += ` PARTITION BY ${t.partkey}`;
    if (t.reloptions?.length) head += ` WITH (${t.reloptions.join(", ")})`;
    out.push(`${head};`);

    // Indexes that back a constraint are printed with it; partitions inherit their parent's.
    const idx = await client.query<{ def: string }>(
      `SELECT pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i
         JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = $1
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid)
        ORDER BY ic.relname COLLATE "C"`,
      [t.oid],
    );
    for (const i of idx.rows) out.push(`${i.def};`);
    out.push("");
  }

  const fns = await client.query<{ def: string }>(
    `SELECT pg_get_functiondef(p.oid) AS def
       FROM pg_proc p
       JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
      ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C"`,
  );
  for (const f of fns.rows) out.push(`${f.def.trimEnd()};`, "");

  // Triggers a partition got from its parent (tgparentid) are its parent's.
  const trg = await client.query<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) AS def
       FROM pg_trigger t
       JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT t.tgisinternal AND t.tgparentid = 0
      ORDER BY c.relname COLLATE "C", t.tgname COLLATE "C"`,
  );
  for (const t of trg.rows) out.push(`${t.def};`);

  return `${out.join("\n").trimEnd()}\n`;
}
