// Releasing claimed rows that never went on the wire (held rows past their
// time, rows waiting on a rate limit at shutdown): back to their prior state,
// no attempt recorded, since none was made.
import "server-only";
import type pg from "pg";

/** Returns leased rows that were never sent to their prior state, unchanged otherwise. */
export async function releaseUnsent(
  db: pg.Pool | pg.PoolClient,
  owner: string,
  rows: { id: string; eventAt: string; prevState: string; claimToken: string }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  // The rows' months named as an array the planner sees as a constant: the statement locks only those months, so a
  // month retention is emptying (./freeze.ts) does not hold it up unless one of these rows lives there.
  const r = await db.query(
    `UPDATE deliveries d SET state = u.prev_state, lease_owner = NULL, lease_until = NULL, leased_at = NULL, updated_at = now()
       FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS u(id, prev_state, claim_token, at)
      WHERE d.id = u.id AND d.event_at = u.at AND d.event_at = ANY($5::timestamptz[])
        AND d.state = 'in_flight' AND d.lease_owner = $1 AND d.leased_at = u.claim_token`,
    [owner, rows.map((r) => r.id), rows.map((r) => r.prevState), rows.map((r) => r.claimToken), rows.map((r) => r.eventAt)],
  );
  return r.rowCount ?? 0;
}
