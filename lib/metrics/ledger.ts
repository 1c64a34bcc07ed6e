// Gauges derived from the ledger, read at scrape time. Every query here is
// bounded by the number of subscriptions and workers, not by the number of
// deliveries: counts come from delivery_state_counts (kept by triggers,
// migration 0006), the oldest dead letter per subscription is one index seek
// per (subscription, reason) on deliveries_dlq, and the head of the due queue
// is the first due entry of deliveries_sub_due per active subscription.
import "server-only";
import type pg from "pg";
import { DELIVERY_STATES } from "../ledger/states";
import { findDeadLetterGauges, findOldestDueAgeSeconds, findStateCounts, foldDeliveryCounts } from "../ledger/sql/counts";

export { foldDeliveryCounts };

export type LedgerSnapshot = {
  /** Every subscription × every delivery state (0 where none). */
  deliveries: { subscription: string; state: string; count: number }[];
  /** Non-empty DLQ groups. */
  dlqByReason: { subscription: string; reason: string; depth: number; oldestAt: Date | null }[];
  /** Every subscription: DLQ depth and the age of its oldest dead letter (0 when empty). */
  dlq: { subscription: string; depth: number; oldestAgeSeconds: number }[];
  subscriptions: { subscription: string; state: string }[];
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
    pool.query<{ id: string; state: string }>("SELECT id, state FROM subscriptions ORDER BY id"),
    findStateCounts(pool),
    findDeadLetterGauges(pool),
    pool.query<{ worker_id: string; age: number }>(
      `SELECT worker_id, EXTRACT(EPOCH FROM now() - beat_at)::float8 AS age FROM worker_heartbeats
       WHERE stopped_at IS NULL AND beat_at > now() - interval '1 day' ORDER BY worker_id`,
    ),
    findOldestDueAgeSeconds(pool),
  ]);

  const count = new Map<string, number>();
  for (const r of counts) {
    const key = `${r.subscriptionId}\u0000${r.state}`;
    count.set(key, (count.get(key) ?? 0) + r.n);
  }
  const subIds = new Set(subs.rows.map((s) => s.id));
  // Counts of a deleted subscription are still deliveries in the ledger.
  for (const r of counts) subIds.add(r.subscriptionId);
  const deliveries: LedgerSnapshot["deliveries"] = [];
  for (const id of [...subIds].sort()) for (const state of DELIVERY_STATES) deliveries.push({ subscription: id, state, count: count.get(`${id}\u0000${state}`) ?? 0 });

  const dlqByReason = dlq.map((r) => ({ subscription: r.subscriptionId, reason: r.reason, depth: r.depth, oldestAt: r.oldestAt }));
  const now = dlq[0]?.now ?? new Date();
  const perSub = new Map<string, { depth: number; oldest: number | null }>();
  for (const g of dlqByReason) {
    const cur = perSub.get(g.subscription) ?? { depth: 0, oldest: null };
    cur.depth += g.depth;
    if (g.oldestAt) cur.oldest = Math.min(cur.oldest ?? Infinity, g.oldestAt.getTime());
    perSub.set(g.subscription, cur);
  }
  const dlqRows = [...subIds].sort().map((id) => {
    const g = perSub.get(id);
    return { subscription: id, depth: g?.depth ?? 0, oldestAgeSeconds: g?.oldest != null ? Math.max(0, (now.getTime() - g.oldest) / 1000) : 0 };
  });

  const workerRows = workers.rows.map((w) => ({ workerId: w.worker_id, ageSeconds: Math.max(0, Number(w.age)) }));
  return {
    deliveries,
    dlqByReason,
    dlq: dlqRows,
    subscriptions: subs.rows.map((s) => ({ subscription: s.id, state: s.state })),
    workers: workerRows,
    newestHeartbeatAgeSeconds: workerRows.length ? Math.min(...workerRows.map((w) => w.ageSeconds)) : Infinity,
    oldestDueAgeSeconds,
  };
}
