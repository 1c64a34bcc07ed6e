// The DLQ at a glance for `hookledger dlq`: depth, oldest age, and the groups a
// redrive filters on (subscription and reason), from the ledger's live DLQ
// groups (lib/ledger/sql/dead-letters.ts: the deliveries_dlq partial index).
import "server-only";
import type pg from "pg";
import { findDlqByReason, type DlqReasonGroup } from "../ledger/sql/dead-letters";

type DlqGroup = DlqReasonGroup;
export type DlqSummary = { depth: number; oldestAgeSeconds: number | null; groups: DlqGroup[] };

export async function findDlqSummary(pool: pg.Pool): Promise<DlqSummary> {
  const groups = await findDlqByReason(pool);
  return {
    depth: groups.reduce((n, g) => n + g.depth, 0),
    oldestAgeSeconds: groups.length ? Math.max(...groups.map((g) => g.oldestAgeSeconds)) : null,
    groups,
  };
}

/** "3d 4h", "2h 5m", "45s": an age an operator reads at a glance. */
export function formatAge(seconds: number | null): string {
  if (seconds === null) return "-";
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** A plain-text table: a header row, a rule, then rows; numeric columns right-aligned. */
export function renderTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}
