// A finished batch (done or cancelled) is named once in TypeScript, FINISHED_BATCH_STATUSES, and twice in SQL, where it
// cannot be a parameter: the settle rounds' candidates (settleFinishedBatches) and the partial index
// redrive_batches_unsettled they are read through. The planner uses the index only if the statement spells its
// predicate, so both must say the same as the constant, word for word. This reads the migration that last made the
// index and the statement's text. Every status, BATCH_STATUSES, is the table's CHECK, read from prisma/schema.sql.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BATCH_STATUSES, FINISHED_BATCH_STATUSES, isFinishedBatch } from "@/lib/ledger/states";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MIGRATIONS = path.join(ROOT, "prisma/migrations");

/** The quoted words of an `IN ('a', 'b')` list. */
const words = (list: string) => [...list.matchAll(/'([^']*)'/g)].map((m) => m[1]);
/** A predicate with its whitespace as one space and the table alias dropped, as the planner compares it. */
const plain = (predicate: string, alias = "") => predicate.replace(/\s+/g, " ").replaceAll(alias, "").trim();

/** The WHERE of the last migration that creates redrive_batches_unsettled. */
function indexPredicate(): { migration: string; where: string } {
  const made = readdirSync(MIGRATIONS)
    .sort()
    .flatMap((m) => {
      const file = path.join(MIGRATIONS, m, "migration.sql");
      const sql = readFileSync(file, "utf8").replace(/--.*$/gm, "");
      const found = /CREATE\s+INDEX\s+(?:CONCURRENTLY\s+)?redrive_batches_unsettled\s+ON\s+redrive_batches\s*\([^)]*\)\s*WHERE\s+([^;]+);/i.exec(sql);
      return found ? [{ migration: m, where: found[1] }] : [];
    });
  expect(made.length, "no migration creates redrive_batches_unsettled").toBeGreaterThan(0);
  return made[made.length - 1];
}

/** The candidates' WHERE in settleFinishedBatches, up to the cursor condition. */
function settlePredicate(): string {
  const text = readFileSync(path.join(ROOT, "lib/ledger/sql/recover.ts"), "utf8");
  const body = text.slice(text.indexOf("export async function settleFinishedBatches"));
  const found = /FROM\s+redrive_batches\s+b\s+WHERE\s+([\s\S]*?)\s*\$\{after\}/.exec(body);
  expect(found, "settleFinishedBatches' candidates statement not found").not.toBeNull();
  return found![1];
}

describe("the finished batches, in TypeScript and in SQL", () => {
  it("the settle rounds' statement spells the index's predicate, word for word", () => {
    const index = indexPredicate();
    expect(plain(settlePredicate(), "b."), index.migration).toBe(plain(index.where));
  });

  it("both name exactly the statuses of FINISHED_BATCH_STATUSES", () => {
    const statuses = [...FINISHED_BATCH_STATUSES].sort();
    for (const where of [indexPredicate().where, settlePredicate()]) {
      const list = /status\s+IN\s*\(([^)]*)\)/i.exec(where);
      expect(list, where).not.toBeNull();
      expect(words(list![1]).sort(), where).toEqual(statuses);
    }
  });

  it("BATCH_STATUSES are the statuses redrive_batches' CHECK allows", () => {
    const schema = readFileSync(path.join(ROOT, "prisma/schema.sql"), "utf8");
    const check = /CONSTRAINT redrive_batches_status_check CHECK \(\(status = ANY \(ARRAY\[([^\]]*)\]\)\)\)/.exec(schema);
    expect(check, "redrive_batches_status_check not found in prisma/schema.sql").not.toBeNull();
    expect(words(check![1]).sort()).toEqual([...BATCH_STATUSES].sort());
  });

  it("isFinishedBatch is done or cancelled, and not running or a status it does not know", () => {
    expect(["running", "done", "cancelled", "paused"].map(isFinishedBatch)).toEqual([false, true, true, false]);
  });
});
