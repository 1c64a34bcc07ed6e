// Recover (docs/DESIGN.md invariants 1, 3 and 9): a subscription's deliveries
// created in a time window, sent again as a paced batch. What a window
// matches, the snapshot of a batch's items, the one guarded statement that
// moves them, and a batch's progress by where its deliveries are now.
//
// Moving a row is the resend of a delivered or resolved delivery (the same
// row, key and stored bytes; a fresh signature at send time; the next
// attempt's trigger `resend` by the operator) and the redrive of a dead
// letter (trigger `redrive`). Guarded like every transition: only a row still
// in one of the batch's states, on an active (not archived) subscription, moves, so a row
// already on its way (pending, in flight, scheduled) is never sent twice and
// two pacers stepping the same items move each row once.
import "server-only";
import { empty, iso, join, queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import type { RecoverSample } from "../read/types";

/** The states a recover re-sends unless told otherwise. */
export const RECOVER_DEFAULT_STATES = ["delivered", "resolved", "dead_letter"] as const;
export type RecoverableState = (typeof RECOVER_DEFAULT_STATES)[number];

export type RecoverWindow = { subscriptionId: string; since: string; until: string; states: readonly RecoverableState[] };

/** The window as a WHERE condition over deliveries d (the subscription's timeline index narrows it to one subscription). */
function windowWhere(w: RecoverWindow): Sql {
  return join(
    [
      sql`d.subscription_id = ${w.subscriptionId}`,
      sql`d.created_at >= ${w.since}::timestamptz`,
      sql`d.created_at < ${w.until}::timestamptz`,
      sql`d.state = ANY(${[...w.states]}::text[])`,
      // An erased (or expunged) event's bytes are gone: there is nothing to send again.
      sql`NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.created_at = d.event_at AND e.tombstone IS NOT NULL)`,
    ],
    " AND ",
  );
}

export type RecoverMatchCount = { matched: number; oldest: Date | null; newest: Date | null; byState: Record<string, number> };

/** How many of the subscription's deliveries the window matches, their span, and how many in each state. */
export async function countRecoverMatches(db: LedgerDb, w: RecoverWindow): Promise<RecoverMatchCount> {
  const rows = await queryRows<{ state: string; n: number; oldest: Date | null; newest: Date | null }>(
    db,
    sql`SELECT d.state, count(*)::int AS n, min(d.created_at) AS oldest, max(d.created_at) AS newest
          FROM deliveries d WHERE ${windowWhere(w)} GROUP BY d.state`,
  );
  const byState: Record<string, number> = {};
  let matched = 0;
  let oldest: Date | null = null;
  let newest: Date | null = null;
  for (const r of rows) {
    byState[r.state] = r.n;
    matched += r.n;
    if (r.oldest && (!oldest || r.oldest < oldest)) oldest = r.oldest;
    if (r.newest && (!newest || r.newest > newest)) newest = r.newest;
  }
  return { matched, oldest, newest, byState };
}

/** The oldest `limit` matches, as the preview shows them. */
export async function sampleRecoverMatches(db: LedgerDb, w: RecoverWindow, limit: number): Promise<RecoverSample[]> {
  const rows = await queryRows<Omit<RecoverSample, "createdAt" | "deliveredAt"> & { createdAt: Date; deliveredAt: Date | null }>(
    db,
    sql`SELECT d.id, d.event_id AS "eventId", d.event_type AS "eventType", d.state, d.created_at AS "createdAt", d.delivered_at AS "deliveredAt"
          FROM deliveries d WHERE ${windowWhere(w)}
         ORDER BY d.created_at, d.id LIMIT ${limit}::int`,
  );
  return rows.map((r) => ({ ...r, createdAt: iso(r.createdAt)!, deliveredAt: iso(r.deliveredAt) }));
}

/** Snapshots the window's deliveries into a batch's items, oldest first (seq 1…n). Returns n. */
export async function snapshotRecoverItems(db: LedgerDb, batchId: string, w: RecoverWindow): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`WITH ins AS (
          INSERT INTO redrive_batch_items (batch_id, seq, delivery_id)
          SELECT ${batchId}, row_number() OVER (ORDER BY d.created_at, d.id), d.id
            FROM deliveries d WHERE ${windowWhere(w)}
          RETURNING 1)
        SELECT count(*)::int AS n FROM ins`,
  );
  return r.n;
}

/**
 * Sends the given deliveries again: back to pending, due now, a fresh attempt
 * budget and run, the next attempt recorded as trigger `resend` (a delivered
 * or resolved row) or `redrive` (a dead letter) by `actor`. Each moved row
 * gets its own audit row in the same statement (delivery.resend or
 * delivery.redrive, the batch's reason, the batch id), so the delivery's
 * timeline says who sent it again and why, as a single resend's does.
 * Identity (delivery_key, event, bytes) is never written. Returns the ids
 * that moved.
 */
export async function recoverDeliveries(
  db: LedgerDb,
  ids: string[],
  states: readonly RecoverableState[],
  by: { actor: string; reason: string; batchId: string },
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await queryRows<{ id: string }>(
    db,
    sql`WITH old AS (
          SELECT d.id, d.state, d.dead_letter_reason, d.last_error_class, d.last_status_code
            FROM deliveries d
           WHERE d.id = ANY(${ids}::text[])
             AND d.state = ANY(${[...states]}::text[])
             AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active' AND s.archived_at IS NULL)
             AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.created_at = d.event_at AND e.tombstone IS NOT NULL)
           ORDER BY d.id
             FOR UPDATE OF d
        ), moved AS (
          UPDATE deliveries d
             SET state = 'pending', attempt_count = 0, run_started_at = now(), next_attempt_at = now(),
                 next_trigger = CASE WHEN old.state = 'dead_letter' THEN 'redrive' ELSE 'resend' END, next_actor = ${by.actor},
                 delivered_at = NULL, dead_letter_reason = NULL, dead_lettered_at = NULL,
                 resolution = NULL, resolved_at = NULL, resolved_by = NULL, resolution_reason = NULL,
                 lease_owner = NULL, lease_until = NULL, updated_at = now()
            FROM old
           WHERE d.id = old.id AND d.state = old.state
          RETURNING d.id, d.subscription_id, d.event_id, d.delivery_key, old.state AS from_state,
                    old.dead_letter_reason, old.last_error_class, old.last_status_code
        ), audited AS (
          INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
          SELECT ${by.actor}, CASE WHEN m.from_state = 'dead_letter' THEN 'delivery.redrive' ELSE 'delivery.resend' END, 'delivery', m.id, ${by.reason},
                 CASE WHEN m.from_state = 'dead_letter'
                      THEN jsonb_build_object('count', 1, 'subscriptionId', m.subscription_id, 'eventId', m.event_id, 'deliveryKey', m.delivery_key,
                                              'from', m.from_state, 'deadLetterReason', m.dead_letter_reason, 'lastErrorClass', m.last_error_class,
                                              'lastStatusCode', m.last_status_code, 'batchId', ${by.batchId}::text)
                      ELSE jsonb_build_object('subscriptionId', m.subscription_id, 'eventId', m.event_id, 'deliveryKey', m.delivery_key,
                                              'from', m.from_state, 'batchId', ${by.batchId}::text) END
            FROM moved m
        )
        SELECT id FROM moved`,
  );
  return rows.map((r) => r.id);
}

export type NextRecoverItem = { seq: number; delivery_id: string; state: string; sub_state: string };

/** The next `limit` items of a recover batch after `position`, with their delivery's and subscription's state now. */
export async function findNextRecoverItems(db: LedgerDb, batchId: string, position: number, limit: number): Promise<NextRecoverItem[]> {
  return queryRows<NextRecoverItem>(
    db,
    sql`SELECT n.seq, n.delivery_id, d.state,
               CASE WHEN s.archived_at IS NOT NULL THEN 'archived' ELSE s.state END AS sub_state
          FROM (SELECT i.seq, i.delivery_id FROM redrive_batch_items i
                 WHERE i.batch_id = ${batchId} AND i.seq > ${position}::int
                 ORDER BY i.seq LIMIT ${limit}::int) n
          JOIN deliveries d ON d.id = n.delivery_id
          JOIN subscriptions s ON s.id = d.subscription_id
         ORDER BY n.seq`,
  );
}

export type BatchProgressCounts = {
  /** Items whose delivery the batch sent (redriven, resent or created) and that are delivered now. */
  delivered: number;
  failed: number;
  inProgress: number;
  /** Skipped items by outcome. */
  skipped: Record<string, number>;
};

/** An item whose delivery the batch sent (redriven, resent or created). */
const SENT_OUTCOMES = ["redriven", "resent", "created"];
/** A sent delivery in one of these states is still on its way: queued, being sent, or waiting for its next attempt. */
const ON_THEIR_WAY = ["pending", "in_flight", "scheduled"];

/** The batches' sent items whose delivery is still on its way, as a condition over items i joined to deliveries d. */
const onTheirWay = sql`i.outcome = ANY(${SENT_OUTCOMES}::text[]) AND d.state = ANY(${ON_THEIR_WAY}::text[])`;

/**
 * Of the given batches, how many of each one's sent deliveries are still on their way (a batch with none is absent).
 * It joins every item of the given batches to its delivery: the Redrives list asks it only for its done and cancelled
 * batches not yet settled (settleFinishedBatches), normally few and recent.
 */
export async function countInProgress(db: LedgerDb, batchIds: string[]): Promise<Map<string, number>> {
  if (batchIds.length === 0) return new Map();
  const rows = await queryRows<{ batch_id: string; n: number }>(
    db,
    sql`SELECT i.batch_id, count(*)::int AS n
          FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id
         WHERE i.batch_id = ANY(${batchIds}::text[]) AND ${onTheirWay}
         GROUP BY i.batch_id`,
  );
  return new Map(rows.map((r) => [r.batch_id, r.n]));
}

/** Where a round of settleFinishedBatches stopped: the last batch it looked at, by (finished_at, id). */
export type SettleCursor = { at: string; id: string };

/**
 * Settles finished batches, done or cancelled (cancelling stops the pacer, not the deliveries it already moved back
 * into the queue): of up to `limit` finished batches not yet settled, after `after` in (finished_at, id) order,
 * those none of whose sent deliveries is still on its way get settled_at. Each look reads the batch's items last
 * first (the last queued are the last sent) and stops at the first delivery still on its way; the batch keeps that
 * item's seq (settle_seq), and the next look starts there: the items after it were sent and done with, and a delivery
 * done with never goes back on its way by itself. So each item is read about once whatever the number of rounds (a
 * batch of 10,000 with one early delivery retrying for days would otherwise be read whole every round). Returns the
 * batches it looked at, in order, and which it settled; fewer than `limit` means it reached the end, and the next round
 * starts again from the first.
 */
export async function settleFinishedBatches(
  db: LedgerDb,
  opts: { after: SettleCursor | null; limit: number },
): Promise<{ looked: { id: string; at: string; settled: boolean }[] }> {
  const after = opts.after ? sql`AND (b.finished_at, b.id) > (${opts.after.at}::timestamptz, ${opts.after.id}::text)` : empty;
  const looked = await queryRows<{ id: string; at: string; settled: boolean }>(
    db,
    sql`WITH cand AS (
          -- Written as the partial index redrive_batches_unsettled's predicate, so the planner sees it covers it, with
          -- the statuses of FINISHED_BATCH_STATUSES (lib/ledger/states.ts); test/codebase/finished-batch-statuses.test.ts holds the three together.
          SELECT b.id, b.finished_at, b.settle_seq FROM redrive_batches b
           WHERE b.status IN ('done', 'cancelled') AND b.settled_at IS NULL ${after}
           ORDER BY b.finished_at, b.id LIMIT ${opts.limit}::int
        ), look AS (
          -- A scalar subquery, not EXISTS: PostgreSQL drops an EXISTS's ORDER BY and LIMIT, and would read first to last.
          SELECT cand.id, cand.finished_at,
                 (SELECT i.seq FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id
                   WHERE i.batch_id = cand.id AND i.seq <= coalesce(cand.settle_seq, 2147483647) AND ${onTheirWay}
                   ORDER BY i.seq DESC LIMIT 1) AS on_way_seq
            FROM cand
        ), marked AS (
          UPDATE redrive_batches b
             SET settle_seq = look.on_way_seq, settled_at = CASE WHEN look.on_way_seq IS NULL THEN now() END
            FROM look
           WHERE b.id = look.id AND b.settled_at IS NULL
          RETURNING b.id, b.settled_at IS NOT NULL AS settled
        )
        SELECT look.id, look.finished_at::text AS at, coalesce(marked.settled, false) AS settled
          FROM look LEFT JOIN marked ON marked.id = look.id
         ORDER BY look.finished_at, look.id`,
  );
  return { looked };
}

/** Any batch's handled items: the sent ones by where their delivery is now, the skipped ones by outcome. */
export async function countBatchProgress(db: LedgerDb, batchId: string): Promise<BatchProgressCounts> {
  const rows = await queryRows<{ outcome: string; state: string | null; n: number }>(
    db,
    sql`SELECT i.outcome, d.state, count(*)::int AS n
          FROM redrive_batch_items i LEFT JOIN deliveries d ON d.id = i.delivery_id
         WHERE i.batch_id = ${batchId} AND i.outcome IS NOT NULL
         GROUP BY i.outcome, d.state`,
  );
  const out: BatchProgressCounts = { delivered: 0, failed: 0, inProgress: 0, skipped: {} };
  for (const r of rows) {
    if (SENT_OUTCOMES.includes(r.outcome)) {
      if (r.state === "delivered") out.delivered += r.n;
      else if (r.state === "dead_letter") out.failed += r.n;
      else if (r.state && ON_THEIR_WAY.includes(r.state)) out.inProgress += r.n;
    } else out.skipped[r.outcome] = (out.skipped[r.outcome] ?? 0) + r.n;
  }
  return out;
}
