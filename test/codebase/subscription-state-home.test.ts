// A subscription's state (active, paused, disabled), its pause columns and its
// archiving change in one file, lib/ledger/sql/subscription-state.ts, each with
// its audit row (docs/DESIGN.md). This walks the application code and fails on
// an `UPDATE subscriptions` that sets one of those columns anywhere else, and
// on a Prisma write of the same fields, so a new feature cannot change a
// subscription's state beside the audited transitions.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WALKED = ["app", "components", "lib", "worker", "cli", "demo", "scripts"];
const HOME = "lib/ledger/sql/subscription-state.ts";
const STATE_COLUMNS = ["state", "paused_reason", "paused_at", "archived_at", "archive_reason", "archived_by"];
const STATE_FIELDS = ["state", "pausedReason", "pausedAt", "archivedAt", "archiveReason", "archivedBy"];

/** The offences in one source text: SQL updates of the state columns, and Prisma subscription writes of the state fields. */
function stateWrites(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/UPDATE\s+subscriptions\b[\s\S]*?\bSET\b([\s\S]*?)(\bWHERE\b|\bFROM\b|`|$)/g)) {
    const set = m[1];
    for (const c of STATE_COLUMNS) if (new RegExp(`(^|[\\s,(])${c}\\s*[=,)]`).test(set)) found.push(`UPDATE subscriptions SET ${c}`);
  }
  for (const m of text.matchAll(/\.subscription\.(update|updateMany|upsert)\s*\(/g)) {
    const call = text.slice(m.index!, m.index! + 600);
    for (const f of STATE_FIELDS) if (new RegExp(`\\b${f}\\s*:`).test(call)) found.push(`prisma.subscription.${m[1]} writes ${f}`);
  }
  for (const f of STATE_FIELDS) if (new RegExp(`\\bdata\\.${f}\\s*=`).test(text)) found.push(`data.${f} = (a Prisma write built field by field)`);
  return found;
}

describe("where a subscription's state changes", () => {
  it(`only ${HOME} writes a subscription's state, pause or archive columns`, () => {
    const offences = WALKED.flatMap((d) => sourceFiles(path.join(ROOT, d)))
      .map((f) => path.relative(ROOT, f))
      .filter((f) => f !== HOME)
      .flatMap((f) => stateWrites(readFileSync(path.join(ROOT, f), "utf8")).map((o) => `${f}: ${o}`));
    expect(offences).toEqual([]);
  });

  it("the home itself holds every transition the check looks for (the check is not blind)", () => {
    const home = stateWrites(readFileSync(path.join(ROOT, HOME), "utf8"));
    for (const c of ["state", "paused_reason", "archived_at"]) expect(home).toContain(`UPDATE subscriptions SET ${c}`);
  });

  it("finds the forms the code used before (a Prisma update, a field set on a data object, a tuple SET)", () => {
    expect(stateWrites("tx.subscription.update({ where: { id }, data: { archivedAt: new Date(), archiveReason: r } })")).toContain(
      "prisma.subscription.update writes archivedAt",
    );
    expect(stateWrites("data.state = state;")).toContain("data.state = (a Prisma write built field by field)");
    expect(stateWrites("UPDATE subscriptions s SET (failing_attempts, state, paused_reason) = (SELECT 1) WHERE")).toContain("UPDATE subscriptions SET state");
    expect(stateWrites("UPDATE subscriptions SET state_reason = 'x', updated_at = now() WHERE id = $1")).toEqual([]);
  });
});
