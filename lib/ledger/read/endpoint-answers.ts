// What an endpoint has been answering, from its newest attempts
// (attempts_sub_started: subscription_id, started_at DESC): the last failure
// of each subscription and the failures grouped by answer.
import "server-only";
import { queryRows, sql, type LedgerDb } from "./db";

export type LastError = { subscription_id: string; started_at: Date; status_code: number | null; error_class: string | null; message: string | null };

/** How far back the health list looks for a subscription's last error. */
const LAST_ERROR_DAYS = 30;

/**
 * The newest failed attempt among each subscription's last 500 of the last
 * LAST_ERROR_DAYS days. The window is what keeps this one query per page:
 * attempts are partitioned by month, and without a bound on created_at every
 * subscription's lookup opens every month (9x slower at 200 subscriptions).
 */
export async function findLastErrors(db: LedgerDb, ids: string[], now = new Date()): Promise<LastError[]> {
  const since = new Date(now.getTime() - LAST_ERROR_DAYS * 86_400_000);
  return queryRows<LastError>(
    db,
    sql`SELECT s.id AS subscription_id, e.started_at, e.status_code, e.error_class, coalesce(e.error_message, left(e.response_excerpt, 120)) AS message
          FROM unnest(${ids}::text[]) AS s(id)
         CROSS JOIN LATERAL (
           SELECT * FROM (SELECT started_at, status_code, error_class, error_message, response_excerpt, outcome
                            FROM attempts a WHERE a.subscription_id = s.id AND a.created_at >= ${since}::timestamptz
                           ORDER BY started_at DESC LIMIT 500) recent
            WHERE outcome <> 'delivered' ORDER BY started_at DESC LIMIT 1
         ) e`,
  );
}

export type AnswerRow = { status_code: number | null; error_class: string | null; signature: string; count: number; first_at: Date; last_at: Date };

/**
 * The failed attempts among a subscription's newest `window`, grouped by
 * status, error class and signature (the answer's first line with digits and
 * ids folded, so variants group together), biggest first; and how many
 * attempts were examined.
 */
export async function findAnswerGroups(db: LedgerDb, subscriptionId: string, window: number): Promise<{ groups: AnswerRow[]; examined: number }> {
  const rows = await queryRows<AnswerRow & { examined: number }>(
    db,
    sql`WITH recent AS (
          SELECT started_at, outcome, status_code, error_class,
                 coalesce(nullif(regexp_replace(left(split_part(coalesce(response_excerpt, error_message, ''), E'\\n', 1), 120),
                                  '[0-9a-f]{8,}|\\d{4,}', '#', 'g'), ''), '') AS signature
            FROM attempts WHERE subscription_id = ${subscriptionId} ORDER BY started_at DESC LIMIT ${window}::int
        )
        SELECT status_code, error_class, signature, count(*)::int AS count, min(started_at) AS first_at, max(started_at) AS last_at,
               (SELECT count(*)::int FROM recent) AS examined
          FROM recent WHERE outcome <> 'delivered'
         GROUP BY 1, 2, 3 ORDER BY count DESC, last_at DESC LIMIT 20`,
  );
  if (rows[0]) return { groups: rows, examined: rows[0].examined };
  const [n] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM attempts WHERE subscription_id = ${subscriptionId} LIMIT ${window}::int) x`,
  );
  return { groups: [], examined: n.n };
}
