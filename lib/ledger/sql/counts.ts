// Counts and gauges of the ledger, bounded by what is queued, not by the
// number of subscriptions or deliveries: delivery_state_counts (per-backend
// rows kept by triggers, migration 0006, summed by every reader and folded now
// and then), whose queue states (pending, scheduled, in flight, dead letter)
// are found through delivery_state_counts_queue (migration 0037) without
// reading the idle subscriptions' `delivered` rows; the oldest dead letter per
// (subscription, reason) by one seek each on deliveries_dlq (subscription_id,
// dead_letter_reason, dead_lettered_at); and the head of the due queue by one
// probe on deliveries_sub_due per active subscription that has a queue.
import "server-only";
import type pg from "pg";
import { withTransaction } from "../../db/client";
import { queryRows, sql, type LedgerDb } from "../read/db";

const FOLD_LOCK = 7_431_801;

/**
 * Folds per-backend counter rows into one row per group. Never waits: rows of a
 * writer still inside its transaction are left for the next fold, and a fold
 * already running elsewhere makes this one a no-op. Reads the rows written
 * since the last fold (delivery_state_counts_unfolded), not every counter.
 */
export async function foldDeliveryCounts(pool: pg.Pool): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [FOLD_LOCK]);
    if (rows[0].ok) await client.query("SELECT hl_fold_delivery_state_counts()");
    return rows[0].ok;
  });
}

export type StateCount = { subscriptionId: string; state: string; reason: string; n: number };

/** Non-zero counts by subscription, state and dead-letter reason ('' for none); optionally only some subscriptions and states. */
export async function findStateCounts(db: LedgerDb, opts: { subscriptionIds?: string[]; states?: string[] } = {}): Promise<StateCount[]> {
  const rows = await queryRows<{ subscription_id: string; state: string; reason: string; n: number | bigint | string }>(
    db,
    sql`SELECT subscription_id, state, reason, sum(n)::bigint AS n FROM delivery_state_counts
         WHERE (${opts.subscriptionIds ?? null}::text[] IS NULL OR subscription_id = ANY(${opts.subscriptionIds ?? null}::text[]))
           AND (${opts.states ?? null}::text[] IS NULL OR state = ANY(${opts.states ?? null}::text[]))
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, state: r.state, reason: r.reason, n: Number(r.n) }));
}

/**
 * Non-zero counts of the queue states (pending, scheduled, in flight, dead
 * letter: delivery_state_counts_queue's predicate) of every subscription,
 * by subscription, state and reason: read through delivery_state_counts_queue,
 * so in time bounded by the subscriptions that have a queue or a dead letter.
 */
export async function findQueueStateCounts(db: LedgerDb): Promise<StateCount[]> {
  const rows = await queryRows<{ subscription_id: string; state: string; reason: string; n: number | bigint | string }>(
    db,
    sql`SELECT subscription_id, state, reason, sum(n)::bigint AS n FROM delivery_state_counts
         WHERE state IN ('pending', 'scheduled', 'in_flight', 'dead_letter')
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, state: r.state, reason: r.reason, n: Number(r.n) }));
}

export type QueueCount = { subscriptionId: string; state: string; n: number; oldestDeadLetterAt: Date | null };

/**
 * A few subscriptions' queue: pending, scheduled, in flight and dead-letter
 * counts, each dead-letter group with its oldest dead letter. Reason '' is a
 * NULL reason (or, in principle, an empty one).
 */
export async function findQueueCounts(db: LedgerDb, ids: string[]): Promise<QueueCount[]> {
  const rows = await queryRows<{ subscription_id: string; state: string; n: number | bigint | string; oldest: Date | null }>(
    db,
    sql`SELECT c.subscription_id, c.state, c.n,
               CASE WHEN c.state <> 'dead_letter' THEN NULL
                    WHEN c.reason = '' THEN least(
                      (SELECT min(d.dead_lettered_at) FROM deliveries d
                        WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason IS NULL),
                      (SELECT min(d.dead_lettered_at) FROM deliveries d
                        WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = ''))
                    ELSE (SELECT min(d.dead_lettered_at) FROM deliveries d
                           WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = c.reason)
               END AS oldest
          FROM (SELECT subscription_id, state, reason, sum(n)::bigint AS n FROM delivery_state_counts
                 WHERE subscription_id = ANY(${ids}::text[]) AND state IN ('pending', 'scheduled', 'in_flight', 'dead_letter')
                 GROUP BY 1, 2, 3 HAVING sum(n) <> 0) c`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, state: r.state, n: Number(r.n), oldestDeadLetterAt: r.oldest }));
}

export type DlqReasonGauge = { subscriptionId: string; reason: string; depth: number; oldestAt: Date | null; now: Date };

/** Every non-empty (subscription, reason) dead-letter group: depth and oldest dead letter, with the database's now. */
export async function findDeadLetterGauges(db: LedgerDb): Promise<DlqReasonGauge[]> {
  const rows = await queryRows<{ subscription_id: string; reason: string; depth: number | bigint | string; oldest_at: Date | null; now: Date }>(
    db,
    sql`SELECT g.subscription_id, g.reason, g.depth,
               CASE WHEN g.reason = '' THEN
                 (SELECT min(d.dead_lettered_at) FROM deliveries d
                   WHERE d.subscription_id = g.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason IS NULL)
               ELSE
                 (SELECT min(d.dead_lettered_at) FROM deliveries d
                   WHERE d.subscription_id = g.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = g.reason)
               END AS oldest_at,
               now() AS now
          FROM (SELECT subscription_id, reason, sum(n)::bigint AS depth FROM delivery_state_counts
                 WHERE state = 'dead_letter' GROUP BY 1, 2 HAVING sum(n) > 0) g`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, reason: r.reason, depth: Number(r.depth), oldestAt: r.oldest_at, now: r.now }));
}

/** Dead letters of the last `windowMinutes` still in the DLQ, per subscription: a range seek per (subscription, reason). */
export async function findRecentDeadLetterCounts(db: LedgerDb, windowMinutes: number): Promise<{ subscriptionId: string; n: number }[]> {
  const rows = await queryRows<{ subscription_id: string; n: number }>(
    db,
    sql`SELECT g.subscription_id, sum(
          (SELECT count(*) FROM deliveries d
            WHERE d.subscription_id = g.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = g.reason
              AND d.dead_lettered_at > now() - make_interval(mins => ${windowMinutes}::int))
          + (SELECT count(*) FROM deliveries d
              WHERE g.reason = '' AND d.subscription_id = g.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason IS NULL
                AND d.dead_lettered_at > now() - make_interval(mins => ${windowMinutes}::int)))::int AS n
          FROM (SELECT subscription_id, reason FROM delivery_state_counts WHERE state = 'dead_letter'
                 GROUP BY 1, 2 HAVING sum(n) > 0) g
         GROUP BY 1`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, n: Number(r.n) }));
}

/**
 * How long the oldest due delivery of an active subscription has waited, in
 * seconds (0 when none is due). Paused and disabled subscriptions hold their
 * deliveries on purpose and are skipped. Only subscriptions whose counters say
 * they have a pending or scheduled delivery are probed: an idle subscription
 * costs nothing here.
 */
export async function findOldestDueAgeSeconds(db: LedgerDb): Promise<number> {
  const rows = await queryRows<{ age: number | null }>(
    db,
    sql`SELECT EXTRACT(EPOCH FROM now() - min(x.next_attempt_at))::float8 AS age
          FROM (SELECT subscription_id FROM delivery_state_counts WHERE state IN ('pending', 'scheduled')
                 GROUP BY 1 HAVING sum(n) > 0) q
          JOIN subscriptions s ON s.id = q.subscription_id AND s.state = 'active'
         CROSS JOIN LATERAL (
           SELECT d.next_attempt_at FROM deliveries d
            WHERE d.subscription_id = s.id AND d.state IN ('pending', 'scheduled') AND d.next_attempt_at <= now()
            ORDER BY d.next_attempt_at LIMIT 1) x`,
  );
  return rows[0]?.age != null ? Math.max(0, Number(rows[0].age)) : 0;
}

/** True when the subscription has any delivery at all (deliveries_sub_timeline). */
export async function hasDeliveries(db: LedgerDb, subscriptionId: string): Promise<boolean> {
  const rows = await queryRows<{ any: boolean }>(db, sql`SELECT EXISTS (SELECT 1 FROM deliveries WHERE subscription_id = ${subscriptionId}) AS any`);
  return rows[0]?.any === true;
}
