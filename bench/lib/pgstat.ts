// What the database spent its time on: pg_stat_statements (when preloaded),
// top statements by total execution time since the last reset.
import type pg from "pg";

export async function resetStatements(db: pg.Pool, enabled: boolean) {
  if (enabled) await db.query("SELECT pg_stat_statements_reset()").catch(() => {});
}

/** sharePct: of all top-level statement time; nested statements (inside triggers or functions) are marked and counted inside their caller too. */
export type StatementStat = { query: string; calls: number; totalMs: number; meanMs: number; rows: number; sharePct: number; nested: boolean };

export async function topStatements(db: pg.Pool, enabled: boolean, limit = 8): Promise<StatementStat[] | null> {
  if (!enabled) return null;
  try {
    const { rows } = await db.query(
      `WITH s AS (SELECT query, calls, total_exec_time, rows, toplevel FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))
       SELECT regexp_replace(left(query, 4000), '\\s+', ' ', 'g') AS query, calls::int, total_exec_time AS total, rows::bigint, NOT toplevel AS nested,
              100 * total_exec_time / nullif((SELECT sum(total_exec_time) FROM s WHERE toplevel), 0) AS share
         FROM s ORDER BY total_exec_time DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({
      query: (r.nested ? "(nested) " : "") + summarize(r.query),
      nested: r.nested,
      calls: r.calls,
      totalMs: Math.round(r.total),
      meanMs: Math.round((r.total / Math.max(1, r.calls)) * 100) / 100,
      rows: Number(r.rows),
      sharePct: Math.round(r.share * 10) / 10,
    }));
  } catch {
    return null;
  }
}

/** A recognisable name for a statement: its first 120 characters, with the hot-path ones named. */
function summarize(q: string): string {
  if (/subs AS MATERIALIZED/.test(q) && /json_to_recordset/.test(q)) return "writeAndClaim (lib/ledger/sql/write-and-claim.ts)";
  if (/subs AS MATERIALIZED/.test(q)) return "claimDeliveries (lib/ledger/sql/claim.ts)";
  if (/INSERT INTO attempts/.test(q) && /unnest|json_to_recordset/.test(q)) return "writeResults (lib/ledger/sql/write-results.ts)";
  if (/FROM hl_enqueue_events\(\$1/.test(q)) return "enqueue group (lib/ledger/sql/enqueue.ts, hl_enqueue_events)";
  if (/FROM subscription_secrets/.test(q)) return "activeSecrets (worker/secrets.ts)";
  if (/lease_until < now\(\)/.test(q)) return "abandonLeases/reaper (lib/ledger/sql/abandon-leases.ts)";
  if (/worker_heartbeats/.test(q)) return "heartbeat (worker/heartbeat.ts)";
  if (/delivery_state_counts/.test(q)) return `counts: ${q.slice(0, 100)}`;
  return q.slice(0, 120);
}
