// What a bulk redrive's preview warns about: among the dead
// letters it would send again, those the receiver rejected as permanent (a 4xx
// such as 422: the same bytes will get the same answer), grouped by who said it
// and with what status. Read over the same rows the redrive would take
// (redriveFilterWhere on active subscriptions), through the partial DLQ indexes.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";
import { redriveFilterWhere, type RedriveFilter } from "./redrive";
import { GLOBAL_SCOPE, type Scope } from "../../tenants/scope";

/** `total`: every permanent rejection among the matches, the same on each group's row (the groups may be cut at `limit`). */
export type PermanentGroup = { subscriptionId: string; subscriptionName: string; statusCode: number | null; count: number; exampleId: string; total: number };

/** Groups of permanent rejections among the matches on active subscriptions, most first, at most `limit` groups. */
export async function findPermanentMatches(db: LedgerDb, f: RedriveFilter, limit: number, scope: Scope = GLOBAL_SCOPE): Promise<PermanentGroup[]> {
  return queryRows<PermanentGroup>(
    db,
    sql`SELECT d.subscription_id AS "subscriptionId", s.name AS "subscriptionName", d.last_status_code AS "statusCode",
               count(*)::int AS count, min(d.id) AS "exampleId", (sum(count(*)) OVER ())::int AS total
          FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${redriveFilterWhere(f, scope)} AND s.state = 'active' AND d.dead_letter_reason = 'permanent'
         GROUP BY d.subscription_id, s.name, d.last_status_code
         ORDER BY count(*) DESC, d.subscription_id LIMIT ${limit}::int`,
  );
}
