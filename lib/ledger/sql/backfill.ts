// Backfill (docs/DESIGN.md invariants 1 and 9): deliveries for a
// subscription's past events, those received in a window that match it and
// have no delivery for it yet, created at a batch's pace. The matching is the
// enqueue's own (hl_subscription_matches, migration 0015) and the key its own
// (hl_delivery_key), so a backfilled delivery is the row ingest would have
// written had the subscription existed then. The insert skips any event that
// already has a delivery for the subscription (the unique (event_id,
// subscription_id) pair decides, whatever created it meanwhile), so running a
// backfill twice, or two at once, creates each delivery once.
import "server-only";
import { execute, queryRows, sql, type LedgerDb, type Sql } from "../read/db";

export type BackfillWindow = { subscriptionId: string; since: string; until: string };

/**
 * The advisory lock that holds a batch item's event (migration 0031: no
 * foreign key does). A backfill's item snapshot takes it shared; every
 * statement removing event keys (retention) takes it exclusive, each to its
 * transaction's end. An arbitrary constant ("hlevkey" in ASCII).
 */
export const EVENT_KEYS_LOCK = 0x686c65766b6579;

/** Events e received in the window, not erased, that subscription s receives and has no delivery for. */
function candidates(w: BackfillWindow): Sql {
  return sql`events e JOIN subscriptions s ON s.id = ${w.subscriptionId}
               AND hl_subscription_matches(s.event_types, s.tenant, e.type, e.tenant)
        WHERE e.created_at >= ${w.since}::timestamptz AND e.created_at < ${w.until}::timestamptz
          AND e.tombstone IS NULL
          AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at AND d.subscription_id = s.id)`;
}

export type BackfillMatchCount = { matched: number; oldest: Date | null; newest: Date | null };

export async function countBackfillMatches(db: LedgerDb, w: BackfillWindow): Promise<BackfillMatchCount> {
  const [r] = await queryRows<BackfillMatchCount>(
    db,
    sql`SELECT count(*)::int AS matched, min(e.created_at) AS oldest, max(e.created_at) AS newest FROM ${candidates(w)}`,
  );
  return r;
}

export type BackfillMatch = { eventId: string; eventType: string; occurredAt: Date; receivedAt: Date };

/** The oldest `limit` events a backfill would deliver. */
export async function sampleBackfillMatches(db: LedgerDb, w: BackfillWindow, limit: number): Promise<BackfillMatch[]> {
  return queryRows<BackfillMatch>(
    db,
    sql`SELECT e.id AS "eventId", e.type AS "eventType", e.occurred_at AS "occurredAt", e.created_at AS "receivedAt"
          FROM ${candidates(w)} ORDER BY e.created_at, e.id LIMIT ${limit}::int`,
  );
}

/**
 * Snapshots the events into a batch's items, oldest received first (seq
 * 1…n), in the caller's transaction (which writes the running batch). Returns n.
 * The lock first, in its own statement, so the insert's snapshot is taken
 * after any removal of event keys under way has committed.
 */
export async function snapshotBackfillItems(db: LedgerDb, batchId: string, w: BackfillWindow): Promise<number> {
  await execute(db, sql`SELECT pg_advisory_xact_lock_shared(${EVENT_KEYS_LOCK}::bigint)`);
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`WITH ins AS (
          INSERT INTO redrive_batch_items (batch_id, seq, event_id)
          SELECT ${batchId}, row_number() OVER (ORDER BY e.created_at, e.id), e.id FROM ${candidates(w)}
          RETURNING 1)
        SELECT count(*)::int AS n FROM ins`,
  );
  return r.n;
}

export type NextBackfillItem = { seq: number; event_id: string };

export async function findNextBackfillItems(db: LedgerDb, batchId: string, position: number, limit: number): Promise<NextBackfillItem[]> {
  return queryRows<NextBackfillItem>(
    db,
    sql`SELECT i.seq, i.event_id FROM redrive_batch_items i
         WHERE i.batch_id = ${batchId} AND i.seq > ${position}::int
         ORDER BY i.seq LIMIT ${limit}::int`,
  );
}

export type BackfillOutcome = "created" | "skipped_exists" | "skipped_subscription_inactive" | "skipped_state_changed";

/**
 * Creates the deliveries of the given items (pending, due now) if the
 * subscription is active and still matches each event, and records every
 * item's outcome and delivery id in the same statement. Returns the outcome
 * per seq.
 */
export async function createBackfillDeliveries(db: LedgerDb, batchId: string, subscriptionId: string, items: NextBackfillItem[]): Promise<Map<number, BackfillOutcome>> {
  if (items.length === 0) return new Map();
  const rows = await queryRows<{ seq: number; outcome: BackfillOutcome }>(
    db,
    sql`WITH it AS (
          SELECT x.seq, x.event_id FROM unnest(${items.map((i) => i.seq)}::int[], ${items.map((i) => i.event_id)}::text[]) AS x(seq, event_id)
        ), sub AS (
          -- KEY SHARE until the commit: an archive (FOR UPDATE) waits for the rows written here, or this waits
          -- for the archive and reads the subscription archived (deliveries have no foreign key to hold it, 0024).
          SELECT s.id, CASE WHEN s.archived_at IS NOT NULL THEN 'archived' ELSE s.state END AS state, s.event_types, s.tenant
            FROM subscriptions s WHERE s.id = ${subscriptionId} FOR KEY SHARE
        ), ins AS (
          INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at)
          SELECT hl_delivery_key(sub.id, e.id), e.id, sub.id, e.type, e.created_at
            FROM it JOIN event_keys k ON k.id = it.event_id
            JOIN events e ON e.id = k.id AND e.created_at = k.created_at AND e.tombstone IS NULL
            JOIN sub ON sub.state = 'active' AND hl_subscription_matches(sub.event_types, sub.tenant, e.type, e.tenant)
           ORDER BY e.id
          ON CONFLICT DO NOTHING
          RETURNING id, event_id
        ), decided AS (
          SELECT it.seq,
                 coalesce(ins.id, old.id) AS delivery_id,
                 CASE WHEN ins.id IS NOT NULL THEN 'created'
                      WHEN old.id IS NOT NULL THEN 'skipped_exists'
                      WHEN (SELECT state FROM sub) <> 'active' THEN 'skipped_subscription_inactive'
                      ELSE 'skipped_state_changed' END AS outcome
            FROM it
            LEFT JOIN ins ON ins.event_id = it.event_id
            LEFT JOIN deliveries old ON old.event_id = it.event_id AND old.subscription_id = ${subscriptionId}
        ), rec AS (
          UPDATE redrive_batch_items i SET delivery_id = decided.delivery_id, outcome = decided.outcome, processed_at = now()
            FROM decided WHERE i.batch_id = ${batchId} AND i.seq = decided.seq
          RETURNING i.seq)
        SELECT seq, outcome FROM decided`,
  );
  return new Map(rows.map((r) => [r.seq, r.outcome]));
}
