// Resolve (docs/DESIGN.md, Delivery states): an operator's decision that a
// dead letter will not be delivered. One guarded statement per call moves
// rows still in `dead_letter` to `resolved` with the decision, and writes one
// `delivery.resolve` audit row per moved delivery in the same statement, so
// each delivery's timeline (which reads its audit rows) shows who decided
// what and why, also after a bulk resolve, and a row that did not move gets
// no audit row. Identity (delivery_key, event, bytes) is never written.
import "server-only";
import { queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import type { DeadLetterSample } from "../read/types";
import { redriveFilterWhere, sampleDeadLetters, type RedriveFilter } from "./redrive";
import type { Resolution } from "../states";
import { GLOBAL_SCOPE, type Scope } from "../../tenants/scope";

/** `correctedEventId`: a fixed_at_source decision's corrected event, kept in the audit row (both timelines read it). */
export type ResolveDecision = { resolution: Resolution; reason: string; actor: string; bulkId?: string | null; correctedEventId?: string | null };

/** Rows a bulk resolve moves per statement: 5,000 keeps each statement's locks and trigger work small (about 0.3 s each). */
export const RESOLVE_CHUNK = 5_000;

function moveAndAudit(picked: Sql, d: ResolveDecision): Sql {
  return sql`WITH p AS (${picked}),
    moved AS (
      UPDATE deliveries d
         SET state = 'resolved', resolution = ${d.resolution}, resolved_at = now(), resolved_by = ${d.actor},
             resolution_reason = ${d.reason}, lease_owner = NULL, lease_until = NULL, updated_at = now()
        FROM p
       WHERE d.id = p.id AND d.state = 'dead_letter'
      RETURNING d.id, d.subscription_id, d.event_id, d.delivery_key, d.dead_letter_reason),
    audited AS (
      INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
      SELECT ${d.actor}, 'delivery.resolve', 'delivery', m.id, ${d.reason},
             jsonb_build_object('subscriptionId', m.subscription_id, 'eventId', m.event_id, 'deliveryKey', m.delivery_key,
                                'resolution', ${d.resolution}::text, 'deadLetterReason', m.dead_letter_reason, 'bulkId', ${d.bulkId ?? null}::text)
             || CASE WHEN ${d.correctedEventId ?? null}::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('correctedEventId', ${d.correctedEventId ?? null}::text) END
        FROM moved m)
    SELECT m.id, m.subscription_id AS "subscriptionId" FROM moved m`;
}

/** Resolves the given ids that are still dead-lettered, in one statement; returns the ids that moved (with their subscriptions). A row another transaction moved first is left as it now is. */
export async function resolveDeliveries(db: LedgerDb, ids: string[], d: ResolveDecision): Promise<{ id: string; subscriptionId: string }[]> {
  if (ids.length === 0) return [];
  return queryRows<{ id: string; subscriptionId: string }>(db, moveAndAudit(sql`SELECT unnest(${ids}::text[]) AS id`, d));
}

/**
 * The ids of every dead letter matching the filter (any subscription state: a
 * disabled subscription's `gone` letters are the common case), oldest first.
 * A bulk resolve reads them once and moves them in chunks by id, so no chunk
 * re-scans the DLQ index past the rows the previous chunks already moved.
 */
export async function findResolveMatchIds(db: LedgerDb, f: RedriveFilter, scope: Scope = GLOBAL_SCOPE): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(db, sql`SELECT d.id FROM deliveries d WHERE ${redriveFilterWhere(f, scope)} ORDER BY d.dead_lettered_at, d.id`);
  return rows.map((r) => r.id);
}

export type ResolveMatchCount = { matched: number; oldest: Date | null; newest: Date | null };

/** What a bulk resolve would move: dead letters matching the filter on any subscription. */
export async function countResolveMatches(db: LedgerDb, f: RedriveFilter, scope: Scope = GLOBAL_SCOPE): Promise<ResolveMatchCount> {
  const [r] = await queryRows<ResolveMatchCount>(
    db,
    sql`SELECT count(*)::int AS matched, min(d.dead_lettered_at) AS oldest, max(d.dead_lettered_at) AS newest
          FROM deliveries d WHERE ${redriveFilterWhere(f, scope)}`,
  );
  return r;
}

/** The oldest `limit` matches, as the preview shows them. */
export async function sampleResolveMatches(db: LedgerDb, f: RedriveFilter, limit: number, scope: Scope = GLOBAL_SCOPE): Promise<DeadLetterSample[]> {
  // Every matching dead letter, on any subscription; a resolve is not filtered by the error class it shows.
  return (await sampleDeadLetters(db, redriveFilterWhere(f, scope), limit)).map(({ lastErrorClass: _class, ...sample }) => sample);
}
