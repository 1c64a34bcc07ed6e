// lib/ledger is the only code that reads or writes the ledger tables
// (docs/STYLE.md, layering). This walks the application code and fails on any
// SQL that names a ledger table outside lib/ledger, on any Prisma delegate of
// a ledger model, and on $queryRawUnsafe/$executeRawUnsafe anywhere (SQL is
// built from parameters, never from concatenated strings). Tests, bench and
// chaos are not walked: they read the ledger on purpose, to check it
// independently of the code under test.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WALKED = ["app", "components", "lib", "worker", "cli", "demo"];
const EXEMPT = ["lib/ledger/", "lib/generated/"];

export const LEDGER_TABLES = [
  "events",
  "deliveries",
  "attempts",
  "delivery_state_counts",
  "attempt_stats_minute",
  "attempt_stats_hour",
  "dlq_samples",
  "dlq_sample_groups",
];
const LEDGER_MODELS = ["event", "delivery", "attempt", "deliveryStateCount", "attemptStatsMinute", "attemptStatsHour", "dlqSample", "dlqSampleGroup"];

// SQL keywords in capitals (how this code base writes SQL), a table name as a
// whole word: `FROM deliveries d`, `JOIN attempts`, `INSERT INTO events`,
// `UPDATE deliveries`, `DELETE FROM dlq_samples`. Index names such as
// deliveries_dlq do not match (`_` continues the word).
const TABLE_SQL = new RegExp(`\\b(FROM|JOIN|INTO|UPDATE)\\s+(${LEDGER_TABLES.join("|")})\\b(?!\\.)`);
const PRISMA_DELEGATE = new RegExp(
  `\\.(${LEDGER_MODELS.join("|")})\\.(findMany|findFirst|findFirstOrThrow|findUnique|findUniqueOrThrow|create|createMany|createManyAndReturn|update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy)\\b`,
);
const UNSAFE_RAW = /\$(queryRawUnsafe|executeRawUnsafe)\b/;

export type Offence = { file: string; line: number; text: string; why: string };

/** Every offence in one source text (comment lines are skipped: prose may say "from deliveries"). */
export function findOffences(file: string, source: string, opts: { ledgerOwner?: boolean } = {}): Offence[] {
  const out: Offence[] = [];
  let inBlockComment = false;
  source.split("\n").forEach((raw, i) => {
    const t = raw.trim();
    if (inBlockComment) {
      if (t.includes("*/")) inBlockComment = false;
      return;
    }
    if (t.startsWith("/*")) {
      inBlockComment = !t.includes("*/");
      return;
    }
    if (t.startsWith("//") || t.startsWith("*")) return;
    const code = raw.replace(/\s\/\/\s.*$/, "");
    const hit = (why: string) => out.push({ file, line: i + 1, text: t.slice(0, 160), why });
    if (UNSAFE_RAW.test(code)) hit("string-built SQL ($queryRawUnsafe/$executeRawUnsafe)");
    if (opts.ledgerOwner) return;
    if (TABLE_SQL.test(code)) hit("SQL on a ledger table outside lib/ledger");
    if (PRISMA_DELEGATE.test(code)) hit("Prisma access to a ledger model outside lib/ledger");
  });
  return out;
}

/** Every script below `dir` but tests (Prisma's generated client is skipped by sourceFiles). */
const scripts = (dir: string) => sourceFiles(dir, /\.(ts|tsx|mts|cts|js|mjs)$/).filter((f) => !/\.test\.tsx?$/.test(f));

describe("ledger boundary", () => {
  it("the detector sees SQL, Prisma delegates and unsafe raw queries, and not prose or index names", () => {
    const src = [
      "// reads from deliveries via the index",
      "const a = `SELECT id FROM deliveries WHERE state = $1`;",
      "const b = `SELECT 1 FROM subscriptions s JOIN attempts a ON true`;",
      "await prisma.delivery.findMany({});",
      "await tx.$queryRawUnsafe(sql, 1);",
      "const c = `SELECT * FROM deliveries_dlq`;",
      "const d = `INSERT INTO redrive_batch_items (batch_id) VALUES ($1)`;",
      "/*",
      " UPDATE deliveries SET state = 'x'",
      "*/",
      "const e = `UPDATE dlq_samples SET depth = 0`;",
    ].join("\n");
    expect(findOffences("x.ts", src).map((o) => o.line)).toEqual([2, 3, 4, 5, 11]);
    expect(findOffences("lib/ledger/x.ts", src, { ledgerOwner: true }).map((o) => o.line)).toEqual([5]);
  });

  it("no file outside lib/ledger touches the ledger tables, and nothing builds SQL from strings", () => {
    const offences: Offence[] = [];
    for (const top of WALKED) {
      for (const abs of scripts(path.join(ROOT, top))) {
        const rel = path.relative(ROOT, abs).split(path.sep).join("/");
        const ledgerOwner = EXEMPT.some((p) => rel.startsWith(p));
        offences.push(...findOffences(rel, readFileSync(abs, "utf8"), { ledgerOwner }));
      }
    }
    const report = offences.map((o) => `${o.file}:${o.line}: ${o.why}: ${o.text}`).join("\n");
    expect(offences.length, `ledger SQL outside lib/ledger:\n${report}`).toBe(0);
  });
});
