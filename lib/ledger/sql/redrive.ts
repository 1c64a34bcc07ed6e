// Redrive (docs/DESIGN.md invariants 3 and 9): the one guarded statement that
// moves dead letters back to pending, and the ledger reads a bulk redrive
// needs (what a filter matches, the snapshot of a batch, its items' current
// state). A row moves only if it is still dead-lettered and its subscription
// is active, so an already delivered row is never touched and two concurrent
// redrives of one row move it once (the second blocks on the row lock,
// re-checks state = 'dead_letter' and finds nothing to do). Identity
// (delivery_key, event, bytes) is never written.
import "server-only";
import { execute, iso, join, queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import type { RedriveSample } from "../read/types";
import { AppError } from "../../errors";
import { findDeliveryTombstone, tombstoneSentence } from "./erase";
import { GLOBAL_SCOPE, subscriptionInScope, type Scope } from "../../tenants/scope";

/** What a bulk redrive selects, among dead-lettered deliveries only. */
export type RedriveFilter = {
  subscriptionId?: string;
  deadLetterReason?: string;
  errorClass?: string;
  statusCode?: number;
  deadLetteredFrom?: string;
  deadLetteredTo?: string;
};

/**
 * Back to pending with a fresh attempt budget (attempt_count 0, a new run),
 * due now, the next attempt recorded as trigger `redrive` by `actor` (the
 * worker copies next_trigger/next_actor into the attempt). Returns the ids
 * that moved; the others were not dead-lettered or their subscription is not
 * active. With `reopenResolved` (a single redrive: the operator looked at this
 * row) a resolved delivery reopens too, same key, its decision cleared (the
 * audit log keeps it); a bulk batch leaves rows resolved after its snapshot.
 * A delivery whose event was erased never moves (there is nothing left to
 * send): a single redrive of one is a 409 saying so; a batch skips it.
 */
export async function redriveDeliveries(db: LedgerDb, ids: string[], actor: string, opts: { reopenResolved?: boolean } = {}): Promise<string[]> {
  if (ids.length === 0) return [];
  if (opts.reopenResolved) await refuseTombstoned(db, ids, "redriven");
  const rows = await queryRows<{ id: string }>(
    db,
    sql`UPDATE deliveries d
           SET state = 'pending', attempt_count = 0, run_started_at = now(), next_attempt_at = now(),
               next_trigger = 'redrive', next_actor = ${actor},
               dead_letter_reason = NULL, dead_lettered_at = NULL,
               resolution = NULL, resolved_at = NULL, resolved_by = NULL, resolution_reason = NULL,
               lease_owner = NULL, lease_until = NULL, updated_at = now()
         WHERE d.id = ANY(${ids}::text[])
           AND (d.state = 'dead_letter' OR (${opts.reopenResolved ?? false}::boolean AND d.state = 'resolved'))
           AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active')
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.created_at = d.event_at AND e.tombstone IS NOT NULL)
        RETURNING d.id`,
  );
  return rows.map((r) => r.id);
}

/** 409 when a delivery's event is a tombstone (lib/ledger/sql/erase.ts): its payload is gone, so it can never be sent again. */
export async function refuseTombstoned(db: LedgerDb, ids: string[], verb: "redriven" | "resent"): Promise<void> {
  for (const id of ids) {
    const t = await findDeliveryTombstone(db, id);
    if (t)
      throw new AppError("conflict", `Delivery ${id} cannot be ${verb}: ${tombstoneSentence(t)}. Nothing is left to send.`, {
        tombstone: t.tombstone,
        erasureId: t.erasureId,
        erasedAt: new Date(t.at).toISOString(),
      });
  }
}

/**
 * "Latest state wins": true when a newer event of the same type and the same
 * subject (every subject key, e.g. tenant + studentId + assignmentId) has
 * already been delivered to the same subscription, so redriving this stale one
 * would overwrite newer data at the receiver. Expects aliases d (deliveries)
 * and e (its event). The GIN index on subject_values finds the candidates.
 */
const SUPERSEDED = sql`EXISTS (
    SELECT 1 FROM events e2 JOIN deliveries d2 ON d2.event_id = e2.id
     WHERE e.subject <> '{}'::jsonb
       AND e2.subject_values @> e.subject_values AND e2.subject = e.subject
       AND e2.type = e.type AND e2.occurred_at > e.occurred_at
       AND d2.subscription_id = d.subscription_id AND d2.state = 'delivered')`;

/**
 * The filter as a WHERE condition over deliveries d, dead-lettered rows only (so the partial DLQ indexes serve it),
 * confined to `scope`'s tenant whatever the filter says: every bulk redrive and resolve reads its rows through here.
 */
export function redriveFilterWhere(f: RedriveFilter, scope: Scope = GLOBAL_SCOPE): Sql {
  const c: Sql[] = [sql`d.state = 'dead_letter'`, subscriptionInScope(scope, "d.subscription_id")];
  if (f.subscriptionId) c.push(sql`d.subscription_id = ${f.subscriptionId}`);
  if (f.deadLetterReason) c.push(sql`d.dead_letter_reason = ${f.deadLetterReason}`);
  if (f.errorClass) c.push(sql`d.last_error_class = ${f.errorClass}`);
  if (f.statusCode !== undefined) c.push(sql`d.last_status_code = ${f.statusCode}::int`);
  if (f.deadLetteredFrom) c.push(sql`d.dead_lettered_at >= ${f.deadLetteredFrom}::timestamptz`);
  if (f.deadLetteredTo) c.push(sql`d.dead_lettered_at < ${f.deadLetteredTo}::timestamptz`);
  return join(c, " AND ");
}

export type RedriveMatchCount = { matched: number; oldest: Date | null; newest: Date | null; superseded: number | null };

/** How many dead letters on active subscriptions match, their time span, and (when asked) how many a newer event supersedes. */
export async function countRedriveMatches(db: LedgerDb, f: RedriveFilter, opts: { latestStateWins?: boolean; scope?: Scope } = {}): Promise<RedriveMatchCount> {
  const where = sql`${redriveFilterWhere(f, opts.scope)} AND s.state = 'active'`;
  if (opts.latestStateWins) return countSuperseded(db, where);
  const [r] = await queryRows<RedriveMatchCount>(
    db,
    sql`SELECT count(*)::int AS matched, min(d.dead_lettered_at) AS oldest, max(d.dead_lettered_at) AS newest, NULL::int AS superseded
          FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${where}`,
  );
  return r;
}

/**
 * The preview's count with SUPERSEDED's meaning (the pacer decides each item by it; a test holds the two together),
 * computed for the whole set at once. SUPERSEDED per dead letter searches the subject index and probes deliveries in
 * every month: about a millisecond a dead letter, tens of seconds at 50,000, past a request's statement timeout.
 * Here each distinct (subscription, type, subject) of the matches finds its events once, through the subject index
 * when they are few or one hash join over events when they are many (the planner's choice, and at worst the per-item
 * cost again); each such event's delivery to that subscription is one probe in its own month; and the newest
 * delivered event of a key is compared to each dead letter's in one window over both.
 *
 * The shape keeps the planner away from joining on (event id, month) pairs, whose two equalities it multiplies into
 * an estimate of one row. On that estimate it seq-scanned events once per key (the dead letter's event, here joined
 * on its id alone: ids are unique across months, event_keys, and `own` keeps its own month's row), or crossed every
 * delivered row with every key (the delivery probe, hence a LATERAL with a LIMIT, which is always a nested loop):
 * both ran for over ten minutes on the bench's ledger.
 */
async function countSuperseded(db: LedgerDb, where: Sql): Promise<RedriveMatchCount> {
  const [r] = await queryRows<RedriveMatchCount>(
    db,
    sql`WITH m AS MATERIALIZED (
          SELECT d.dead_lettered_at, d.subscription_id, e.type, e.subject, e.subject_values, e.occurred_at, e.created_at = d.event_at AS own
            FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id JOIN events e ON e.id = d.event_id
           WHERE ${where}
        ), keys AS MATERIALIZED (
          SELECT DISTINCT subscription_id, type, subject, subject_values FROM m WHERE own AND subject <> '{}'::jsonb
        ), delivered AS (
          SELECT k.subscription_id, k.type, k.subject, e2.occurred_at
            FROM keys k
            JOIN events e2 ON e2.subject_values @> k.subject_values AND e2.subject = k.subject AND e2.type = k.type
           CROSS JOIN LATERAL (SELECT 1 FROM deliveries d2
                                WHERE d2.event_id = e2.id AND d2.event_at = e2.created_at AND d2.subscription_id = k.subscription_id
                                  AND d2.state = 'delivered' LIMIT 1) d2
        ), w AS (
          SELECT dead, dead_lettered_at, occurred_at,
                 max(occurred_at) FILTER (WHERE NOT dead) OVER (PARTITION BY subscription_id, type, subject) AS newest_delivered
            FROM (SELECT subscription_id, type, subject, occurred_at, dead_lettered_at, true AS dead FROM m WHERE own
                  UNION ALL
                  SELECT subscription_id, type, subject, occurred_at, NULL, false FROM delivered) u
        )
        SELECT count(*)::int AS matched, min(dead_lettered_at) AS oldest, max(dead_lettered_at) AS newest,
               (count(*) FILTER (WHERE newest_delivered > occurred_at))::int AS superseded
          FROM w WHERE dead`,
  );
  return r;
}

/**
 * The oldest `limit` dead letters `where` matches (d = deliveries, s = their subscription, absent for a delivery whose
 * subscription is gone), as the bulk redrive's and resolve's previews show them.
 */
export async function sampleDeadLetters(db: LedgerDb, where: Sql, limit: number): Promise<RedriveSample[]> {
  const rows = await queryRows<Omit<RedriveSample, "deadLetteredAt"> & { deadLetteredAt: Date | null }>(
    db,
    sql`SELECT d.id, d.event_id AS "eventId", d.event_type AS "eventType", d.subscription_id AS "subscriptionId",
               d.dead_letter_reason AS "deadLetterReason", d.last_status_code AS "lastStatusCode",
               d.last_error_message AS "lastErrorMessage", d.dead_lettered_at AS "deadLetteredAt",
               d.last_error_class AS "lastErrorClass"
          FROM deliveries d LEFT JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${where}
         ORDER BY d.dead_lettered_at, d.id LIMIT ${limit}::int`,
  );
  return rows.map((r) => ({ ...r, deadLetteredAt: iso(r.deadLetteredAt) }));
}

/** The oldest `limit` matches on active subscriptions, as the preview shows them. */
export async function sampleRedriveMatches(db: LedgerDb, f: RedriveFilter, limit: number, scope: Scope = GLOBAL_SCOPE): Promise<RedriveSample[]> {
  return sampleDeadLetters(db, sql`${redriveFilterWhere(f, scope)} AND s.state = 'active'`, limit);
}

export type HeldMatches = { subscriptionId: string; name: string; state: string; stateReason: string | null; count: number };

/** Matches whose subscription is paused or disabled (a redrive leaves them), per subscription, most first. */
export async function countHeldMatches(db: LedgerDb, f: RedriveFilter, scope: Scope = GLOBAL_SCOPE): Promise<HeldMatches[]> {
  return queryRows<HeldMatches>(
    db,
    sql`SELECT s.id AS "subscriptionId", s.name, s.state, s.state_reason AS "stateReason", count(*)::int AS count
          FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${redriveFilterWhere(f, scope)} AND s.state <> 'active'
         GROUP BY s.id, s.name, s.state, s.state_reason ORDER BY count(*) DESC`,
  );
}

/** Snapshots the matches on active subscriptions into a batch's items, oldest dead letter first (seq 1…n). Returns n. */
export async function snapshotRedriveItems(db: LedgerDb, batchId: string, f: RedriveFilter, scope: Scope = GLOBAL_SCOPE): Promise<number> {
  return execute(
    db,
    sql`INSERT INTO redrive_batch_items (batch_id, seq, delivery_id)
        SELECT ${batchId}, row_number() OVER (ORDER BY d.dead_lettered_at, d.id), d.id
          FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${redriveFilterWhere(f, scope)} AND s.state = 'active'`,
  );
}

export type NextBatchItem = { seq: number; delivery_id: string; sub_state: string; superseded: boolean };

/**
 * The next `limit` items of a batch after `position`, with what the pacer
 * needs to decide each: the subscription's state and, with
 * `latestStateWins`, whether a newer event has superseded it.
 */
export async function findNextBatchItems(db: LedgerDb, batchId: string, position: number, limit: number, latestStateWins: boolean): Promise<NextBatchItem[]> {
  return queryRows<NextBatchItem>(
    db,
    sql`SELECT n.seq, n.delivery_id, s.state AS sub_state,
               (${latestStateWins}::boolean AND ${SUPERSEDED}) AS superseded
          FROM (SELECT i.seq, i.delivery_id FROM redrive_batch_items i
                 WHERE i.batch_id = ${batchId} AND i.seq > ${position}::int
                 ORDER BY i.seq LIMIT ${limit}::int) n
          JOIN deliveries d ON d.id = n.delivery_id
          JOIN events e ON e.id = d.event_id AND e.created_at = d.event_at
          JOIN subscriptions s ON s.id = d.subscription_id
         ORDER BY n.seq`,
  );
}
