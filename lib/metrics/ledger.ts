// Gauges derived from the ledger, read at scrape time. A scrape is a poll, so
// it costs what is queued, not what exists: at 50,000 districts most
// subscriptions are idle, and neither the statements nor the series grow with
// them. Counts come from delivery_state_counts (kept by triggers, migration
// 0006), the queue states' rows found through delivery_state_counts_queue
// (migration 0037); the oldest dead letter per subscription is one index seek
// per (subscription, reason) on deliveries_dlq; the head of the due queue is
// the first due entry of deliveries_sub_due per active subscription with a
// queue. The one count that reads every subscription is the subscriptions by
// state (a count, no row leaves the database).
//
// Per-subscription series are those of subscriptions with something queued or
// parked: an operator watching 10,000 districts wants the ones with a backlog
// or a dead letter named, and the rest summed, not 10,000 zeros (or 60,000,
// one per state). The delivered and resolved counts, which grow with the
// ledger for every subscription that ever received anything, are not series:
// the workers' hookledger_attempts_total gives the rate, the dashboard each
// subscription's totals.
import "server-only";
import type pg from "pg";
import { findDeadLetterGauges, findOldestDueAgeSeconds, findQueueStateCounts, foldDeliveryCounts } from "../ledger/sql/counts";

export { foldDeliveryCounts };

export type LedgerSnapshot = {
  /** Pending, scheduled, in-flight and dead-lettered deliveries by subscription and state: non-zero counts only. */
  deliveries: { subscription: string; state: string; count: number }[];
  /** Non-empty DLQ groups. */
  dlqByReason: { subscription: string; reason: string; depth: number; oldestAt: Date | null }[];
  /** Subscriptions with dead letters: DLQ depth and the age of the oldest one. */
  dlq: { subscription: string; depth: number; oldestAgeSeconds: number }[];
  /** Subscriptions by state (only states that have some). */
  subscriptions: { state: string; count: number }[];
  /** Workers not stopped that beat within the last day (a crashed worker's row ages out of the list). */
  workers: { workerId: string; ageSeconds: number }[];
  /** Age of the newest heartbeat of any running worker; Infinity when none. */
  newestHeartbeatAgeSeconds: number;
  /** How long the oldest due delivery of an active subscription has waited (0 when none is due). */
  oldestDueAgeSeconds: number;
};

export async function readLedgerSnapshot(pool: pg.Pool): Promise<LedgerSnapshot> {
  await foldDeliveryCounts(pool);
  const [subs, counts, dlq, workers, oldestDueAgeSeconds] = await Promise.all([
    pool.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM subscriptions GROUP BY state ORDER BY state"),
    findQueueStateCounts(pool),
    findDeadLetterGauges(pool),
    pool.query<{ worker_id: string; age: number }>(
      `SELECT worker_id, EXTRACT(EPOCH FROM now() - beat_at)::float8 AS age FROM worker_heartbeats
       WHERE stopped_at IS NULL AND beat_at > now() - interval '1 day' ORDER BY worker_id`,
    ),
    findOldestDueAgeSeconds(pool),
  ]);

  // Summed over reasons (a dead letter's counters are kept per reason). Counts of a deleted subscription are still deliveries in the ledger.
  const count = new Map<string, { subscription: string; state: string; count: number }>();
  for (const r of counts) {
    const key = `${r.subscriptionId}\u0000${r.state}`;
    const cur = count.get(key) ?? { subscription: r.subscriptionId, state: r.state, count: 0 };
    cur.count += r.n;
    count.set(key, cur);
  }
  const deliveries = [...count.values()].filter((d) => d.count !== 0).sort((a, b) => a.subscription.localeCompare(b.subscription) || a.state.localeCompare(b.state));

  const dlqByReason = dlq.map((r) => ({ subscription: r.subscriptionId, reason: r.reason, depth: r.depth, oldestAt: r.oldestAt }));
  const now = dlq[0]?.now ?? new Date();
  const perSub = new Map<string, { depth: number; oldest: number | null }>();
  for (const g of dlqByReason) {
    const cur = perSub.get(g.subscription) ?? { depth: 0, oldest: null };
    cur.depth += g.depth;
    if (g.oldestAt) cur.oldest = Math.min(cur.oldest ?? Infinity, g.oldestAt.getTime());
    perSub.set(g.subscription, cur);
  }
  const dlqRows = [...perSub.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, g]) => ({ subscription: id, depth: g.depth, oldestAgeSeconds: g.oldest != null ? Math.max(0, (now.getTime() - g.oldest) / 1000) : 0 }));

  const workerRows = workers.rows.map((w) => ({ workerId: w.worker_id, ageSeconds: Math.max(0, Number(w.age)) }));
  return {
    deliveries,
    dlqByReason,
    dlq: dlqRows,
    subscriptions: subs.rows.map((s) => ({ state: s.state, count: Number(s.n) })),
    workers: workerRows,
    newestHeartbeatAgeSeconds: workerRows.length ? Math.min(...workerRows.map((w) => w.ageSeconds)) : Infinity,
    oldestDueAgeSeconds,
  };
}
