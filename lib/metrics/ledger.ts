// Gauges derived from the ledger, read at scrape time. Every query here is
// bounded by the number of subscriptions and workers, not by the number of
// deliveries: counts come from delivery_state_counts (kept by triggers,
// migration 0006), the oldest dead letter per subscription is one index seek
// per (subscription, reason) on deliveries_dlq, and the head of the due queue
// is the first due entry of deliveries_sub_due per active subscription.
import type pg from "pg";
import { DELIVERY_STATES } from "../ledger/states";
import { connectGuarded, releaseGuarded } from "../db/client";

const FOLD_LOCK = 7_431_801;

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

/**
 * Folds per-backend counter rows into one row per group. Never waits: rows of a
 * writer still inside its transaction are left for the next fold, and a fold
 * already running elsewhere makes this one a no-op.
 */
export async function foldDeliveryCounts(pool: pg.Pool): Promise<boolean> {
  const client = await connectGuarded(pool);
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [FOLD_LOCK]);
    if (rows[0].ok) await client.query("SELECT hl_fold_delivery_state_counts()");
    await client.query("COMMIT");
    return rows[0].ok;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    releaseGuarded(client);
  }
}

export async function readLedgerSnapshot(pool: pg.Pool): Promise<LedgerSnapshot> {
  await foldDeliveryCounts(pool);
  const [subs, counts, dlq, workers, due] = await Promise.all([
    pool.query<{ id: string; state: string }>("SELECT id, state FROM subscriptions ORDER BY id"),
    pool.query<{ subscription_id: string; state: string; reason: string; n: number }>(
      `SELECT subscription_id, state, reason, sum(n)::bigint AS n
       FROM delivery_state_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0`,
    ),
    // The oldest dead letter per (subscription, reason): one seek each on
    // deliveries_dlq (subscription_id, dead_letter_reason, dead_lettered_at).
    pool.query<{ subscription_id: string; reason: string; depth: number; oldest_at: Date | null; now: Date }>(
      `SELECT g.subscription_id, g.reason, g.depth,
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
    ),
    pool.query<{ worker_id: string; age: number }>(
      `SELECT worker_id, EXTRACT(EPOCH FROM now() - beat_at)::float8 AS age FROM worker_heartbeats
       WHERE stopped_at IS NULL AND beat_at > now() - interval '1 day' ORDER BY worker_id`,
    ),
    // The head of the due queue, skipping subscriptions that hold their
    // deliveries on purpose (paused, disabled).
    // One index probe per active subscription on deliveries_sub_due (0007 dropped the global index).
    pool.query<{ age: number | null }>(
      `SELECT EXTRACT(EPOCH FROM now() - min(x.next_attempt_at))::float8 AS age
       FROM subscriptions s
       CROSS JOIN LATERAL (
         SELECT d.next_attempt_at FROM deliveries d
         WHERE d.subscription_id = s.id AND d.state IN ('pending', 'scheduled') AND d.next_attempt_at <= now()
         ORDER BY d.next_attempt_at LIMIT 1) x
       WHERE s.state = 'active'`,
    ),
  ]);

  const count = new Map<string, number>();
  for (const r of counts.rows) {
    const key = `${r.subscription_id}\u0000${r.state}`;
    count.set(key, (count.get(key) ?? 0) + Number(r.n));
  }
  const subIds = new Set(subs.rows.map((s) => s.id));
  // Counts of a deleted subscription are still deliveries in the ledger.
  for (const r of counts.rows) subIds.add(r.subscription_id);
  const deliveries: LedgerSnapshot["deliveries"] = [];
  for (const id of [...subIds].sort())
    for (const state of DELIVERY_STATES) deliveries.push({ subscription: id, state, count: count.get(`${id}\u0000${state}`) ?? 0 });

  const dlqByReason = dlq.rows.map((r) => ({ subscription: r.subscription_id, reason: r.reason, depth: Number(r.depth), oldestAt: r.oldest_at }));
  const now = dlq.rows[0]?.now ?? new Date();
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
    oldestDueAgeSeconds: due.rows[0]?.age != null ? Math.max(0, Number(due.rows[0].age)) : 0,
  };
}
