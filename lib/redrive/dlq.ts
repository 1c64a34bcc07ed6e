// The DLQ at a glance for `hookledger dlq`: depth, oldest age, and the groups a
// redrive filters on (subscription and reason). Served by the partial index
// deliveries_dlq (state = 'dead_letter'), never a scan of the hot queue.
import type pg from "pg";

export type DlqGroup = { subscriptionId: string; name: string; subscriptionState: string; reason: string | null; depth: number; oldestAgeSeconds: number };
export type DlqSummary = { depth: number; oldestAgeSeconds: number | null; groups: DlqGroup[] };

export async function findDlqSummary(pool: pg.Pool | pg.Client): Promise<DlqSummary> {
  const { rows } = await pool.query<{
    subscription_id: string;
    name: string;
    state: string;
    reason: string | null;
    depth: number;
    oldest_age: number;
  }>(
    `SELECT g.subscription_id, s.name, s.state, g.reason, g.depth, g.oldest_age
       FROM (SELECT subscription_id, dead_letter_reason AS reason, count(*)::int AS depth,
                    floor(extract(epoch FROM now() - min(dead_lettered_at)))::int AS oldest_age
               FROM deliveries WHERE state = 'dead_letter'
              GROUP BY subscription_id, dead_letter_reason) g
       JOIN subscriptions s ON s.id = g.subscription_id
      ORDER BY g.depth DESC, g.subscription_id, g.reason`,
  );
  const groups = rows.map((r) => ({
    subscriptionId: r.subscription_id,
    name: r.name,
    subscriptionState: r.state,
    reason: r.reason,
    depth: r.depth,
    oldestAgeSeconds: r.oldest_age,
  }));
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
  const line = (r: string[]) => r.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [line(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}
