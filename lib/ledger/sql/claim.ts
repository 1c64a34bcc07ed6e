// Claiming due deliveries, raw `pg` (docs/PLATFORM.md: batched raw statements
// are what reach thousands of deliveries a second). The claim is guarded in SQL
// by state (docs/DESIGN.md invariant 3) and leases each row it returns.
import "server-only";
import type pg from "pg";
import { frozenInFlight, outsideFrozen, type Freeze } from "./freeze";

export type ClaimedRow = {
  id: string;
  deliveryKey: string;
  subscriptionId: string;
  eventId: string;
  /**
   * The event's created_at as Postgres text (microseconds kept): the month
   * partition the delivery lives in (deliveries are partitioned by it,
   * migration 0029). The result write names it, so it reads one month.
   */
  eventAt: string;
  prevState: "pending" | "scheduled";
  /**
   * The claim token: leased_at of this claim as Postgres text (microseconds
   * kept). Result writes match on it as well as on the owner, so a result can
   * only land on the claim it belongs to, never on a later claim of the same
   * row by the same worker after a reap.
   */
  claimToken: string;
  attemptCount: number;
  totalAttempts: number;
  /** Epoch milliseconds (a number, not a Date: parsing timestamps is measurable per delivery). */
  runStartedAt: number;
  /** Epoch milliseconds. */
  dueAt: number;
  trigger: string;
  actor: string | null;
  /** The subscription's place in this claim's window (1 first): nextWindowStart reads it. */
  turn: number;
  /** The subscription's free slots when the claim ran: its first `slotsFree` rows in the batch may go on the wire now, the rest are prefetched (held). */
  slotsFree: number;
  url: string;
  /**
   * The subscription's updated_at as Postgres text, read with `url`: every
   * change of its URL, endpoint headers or client certificate moves it, so the
   * worker can tell that what it cached for the subscription (worker/secrets.ts)
   * belongs to another version than the one this row was claimed under.
   */
  subscriptionVersion: string;
  /** The subscription's retry_policy as JSON text (rows of one subscription share it; lib/ledger/retry-policy.ts caches by it). */
  retryPolicy: string;
  rateLimitPerSecond: number | null;
  payload: Buffer;
};

export type ClaimOptions = {
  owner: string;
  limit: number;
  perSubscription: number;
  leaseSlackSeconds: number;
  excludeSubscriptions: string[];
  /**
   * This worker's in-flight rows whose answer is in and whose result is
   * waiting to be written (or is written by the same statement, whose snapshot
   * still shows them in flight): they are off the wire, so they do not count
   * against `max_concurrency` (counting them held a drain to the pace of the
   * result writes: BENCHMARKS.md F1).
   */
  answered?: string[];
  /**
   * This worker's claimed rows held back, waiting for one of its own requests
   * to the same subscription to finish (prefetched). They are off the wire,
   * and each backs one of this worker's requests on it. Without `held`, the
   * claim prefetches nothing.
   */
  held?: string[];
  /**
   * Deliveries months retention is emptying (./freeze.ts): left out of the
   * statement when it is planned, their in-flight rows counted from the
   * freeze instead.
   */
  frozen?: readonly Freeze[];
  /**
   * Where the window of subscriptions this claim visits starts: after this id,
   * wrapping round to the first ('' or absent: from the first). The worker
   * passes nextWindowStart of its previous claim.
   */
  after?: string;
};

/**
 * The claim as CTEs ending in `claimed`: up to `limit` due deliveries of
 * active, unarchived subscriptions, leased to the owner. The claim visits a
 * window of at most `limit` subscriptions (`qwin`): those with queued rows by
 * the trigger-kept counters, in id order from `after`, wrapping round: the
 * range after `after`, then the range from the first id, each read only as far
 * as the window needs (the wrap-around not at all when the first fills it);
 * `turn` numbers them in that order. Idle
 * subscriptions (nothing pending or scheduled) are never read, so the claim
 * costs what is queued, not what exists (docs/SCALING.md "The claim's
 * window"), and the worker moves `after` on each claim (nextWindowStart), so
 * the subscriptions with work take turns and none starves. Each contributes at
 * most `perSubscription` rows, so one district cannot fill the batch. A
 * subscription's `room` is its
 * `max_concurrency` less its in-flight rows on every worker (this worker's
 * answered ones left out): the rows that may go on the wire now (`slotsFree`).
 * With `held` given, the claim also prefetches: up to one more row for each
 * request this worker has on the wire to the subscription and has not yet
 * backed with a held row. The worker holds those and sends one each time one
 * of its own requests to that subscription finishes, so a freed slot is
 * refilled without waiting for the next claim, and the requests on the wire
 * never exceed `max_concurrency` (held rows count as in flight for every
 * worker's room). The lease is the subscription's timeout plus the slack.
 * The window's subscriptions are read and their in-flight rows counted only
 * as far as the batch reads: `subs` is read once, in turn order, by `cand`,
 * which stops at `limit` rows (the claimed rows carry what they need of their
 * subscription from `cand`), so a window of 200 subscriptions whose first 25
 * fill the batch reads 25 (test/delivery/claim-window.test.ts checks the plan).
 * A delivery carries its event's created_at (event_at, its own partition
 * key), so the claimed row is found again in its month and the payload read
 * probes the event's month only, not every month (test/database/partition-plans.test.ts).
 * `p` names the statement's parameters.
 */
export const claimCtes = (p: {
  owner: string;
  limit: string;
  perSub: string;
  exclude: string;
  slack: string;
  answered: string;
  held: string;
  after: string;
  frozen?: readonly Freeze[];
}) => `
     qwin AS MATERIALIZED (
       SELECT w.id, row_number() OVER () AS turn
       FROM (
         SELECT w.id FROM (
           (${queuedAfter(p.after, ">", p.exclude, p.limit)})
           UNION ALL
           (${queuedAfter(p.after, "<=", p.exclude, p.limit)})
         ) w
         LIMIT ${p.limit}
       ) w
     ),
     subs AS MATERIALIZED (
       SELECT s.id, s.url, s.updated_at, s.retry_policy, s.rate_limit_per_second, w.turn,
              s.max_concurrency - f.busy AS room,
              GREATEST(0, s.max_concurrency - f.busy) + CASE WHEN ${p.held}::text[] IS NULL THEN 0 ELSE GREATEST(0, f.mine_wire - f.mine_held) END AS take
       FROM qwin w
       CROSS JOIN LATERAL (SELECT ${WINDOW_COLUMNS} FROM subscriptions s WHERE s.id = w.id LIMIT 1) s
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE NOT (f.id = ANY(${p.answered}::text[]))) + ${frozenInFlight("s.id", p.frozen ?? [])} AS busy,
                count(*) FILTER (WHERE f.lease_owner = ${p.owner} AND NOT (f.id = ANY(${p.answered}::text[])) AND NOT (f.id = ANY(${p.held}::text[]))) AS mine_wire,
                count(*) FILTER (WHERE f.id = ANY(${p.held}::text[])) AS mine_held
           FROM deliveries f WHERE f.subscription_id = s.id AND f.state = 'in_flight'${outsideFrozen("f", p.frozen ?? [])}
       ) f
     ),
     cand AS (
       SELECT c.id, c.event_at, c.state AS prev_state, c.event_id, subs.id AS sub_id,
              subs.url, subs.updated_at, subs.retry_policy, subs.rate_limit_per_second, subs.turn, subs.room
       FROM subs CROSS JOIN LATERAL (
         SELECT d.id, d.event_at, d.state, d.event_id FROM deliveries d
         WHERE d.subscription_id = subs.id AND d.state IN ('pending', 'scheduled') AND d.next_attempt_at <= now()${outsideFrozen("d", p.frozen ?? [])}
         ORDER BY d.next_attempt_at
         LIMIT LEAST(subs.take, ${p.perSub}::int, COALESCE(subs.rate_limit_per_second, ${p.perSub}::int))
         FOR UPDATE SKIP LOCKED
       ) c
       WHERE subs.take > 0
       LIMIT ${p.limit}
     ),
     claimed AS (
       UPDATE deliveries d
          SET state = 'in_flight', lease_owner = ${p.owner}, leased_at = now(),
              lease_until = now() + make_interval(secs => (CASE WHEN jsonb_typeof(s.retry_policy->'timeoutMs') = 'number'
                                                             THEN (s.retry_policy->>'timeoutMs')::numeric ELSE 15000 END) / 1000 + ${p.slack}::numeric),
              updated_at = now()
         FROM cand s
         JOIN events e ON e.id = s.event_id AND e.created_at = s.event_at
        WHERE d.id = s.id AND d.event_at = s.event_at AND d.state IN ('pending', 'scheduled')${outsideFrozen("d", p.frozen ?? [])}
       RETURNING d.id, d.delivery_key AS "deliveryKey", d.subscription_id AS "subscriptionId", d.event_id AS "eventId", d.event_at::text AS "eventAt",
                 s.prev_state AS "prevState", d.leased_at::text AS "claimToken", d.attempt_count AS "attemptCount", d.total_attempts AS "totalAttempts",
                 (extract(epoch FROM d.run_started_at) * 1000)::float8 AS "runStartedAt", (extract(epoch FROM d.next_attempt_at) * 1000)::float8 AS "dueAt",
                 d.next_trigger AS trigger, d.next_actor AS actor, GREATEST(0, s.room)::int AS "slotsFree",
                 s.url, s.updated_at::text AS "subscriptionVersion", s.retry_policy::text AS "retryPolicy", s.rate_limit_per_second AS "rateLimitPerSecond", e.payload,
                 s.turn::int AS turn
     )`;

export const claimParams = (o: ClaimOptions) => [
  o.limit,
  o.perSubscription,
  o.excludeSubscriptions,
  o.leaseSlackSeconds,
  o.answered ?? [],
  o.held ?? null,
  o.after ?? "",
];

/**
 * The subscriptions with queued rows (pending or scheduled) whose id sorts
 * `op` `after`, in id order, from the trigger-kept counters
 * (delivery_state_counts, migration 0006): one ordered range of their index of
 * pending and scheduled rows by subscription (delivery_state_counts_queued,
 * migration 0043), grouped as it is read, so the scan stops once the window
 * is full and never reads an idle subscription's counters. The counters are
 * per writing backend until folded: a subscription is queued when its rows
 * sum above zero, and taken when it is active, not archived and not held by
 * its endpoint's Retry-After (held_until, ./write-results.ts holdEndpoints).
 * One range, not a merge of one range per state: the planner
 * cannot estimate the groups of a merge (it assumes 200), and then grouped
 * every queued subscription and sorted them to keep a window's worth.
 */
const queuedAfter = (after: string, op: ">" | "<=", exclude: string, limit: string) => `
           SELECT c.subscription_id AS id FROM delivery_state_counts c
            WHERE c.state IN ('pending', 'scheduled') AND c.subscription_id ${op} ${after}::text AND NOT (c.subscription_id = ANY(${exclude}::text[]))
            GROUP BY c.subscription_id
           HAVING sum(c.n) > 0
              AND (SELECT s.state = 'active' AND s.archived_at IS NULL AND (s.held_until IS NULL OR s.held_until <= now())
                     FROM subscriptions s WHERE s.id = c.subscription_id)
            ORDER BY c.subscription_id LIMIT ${limit}`;

/** What the claim reads of each subscription in its window, once, as far as the batch reads the window: the rest of the statement joins no subscription again. */
const WINDOW_COLUMNS = "s.id, s.url, s.updated_at, s.retry_policy, s.rate_limit_per_second, s.max_concurrency";

/** The statement's last column set, after the claimed rows: the window's last subscription, once, on a row of its own (`id` null). */
export const windowEndSelect = `(SELECT id FROM qwin ORDER BY turn DESC LIMIT 1) AS "windowEnd"`;

/**
 * Where the worker's next claim starts its window: after the last
 * subscription (in the window's turn order) that got rows when the batch
 * filled, so those the batch had no room for come first next time; after the
 * window's end when it did not fill, so subscriptions with queued rows but
 * nothing due or no free slot cannot hold the window in place. '' when
 * nothing is queued: the next window starts from the first id.
 */
export function nextWindowStart(claimed: readonly ClaimedRow[], asked: number, windowEnd: string | null): string {
  if (claimed.length >= asked && claimed.length > 0) {
    let last = claimed[0];
    for (const r of claimed) if (r.turn > last.turn) last = r;
    return last.subscriptionId;
  }
  return windowEnd ?? "";
}

/**
 * Claims due deliveries (claimCtes) in one statement. The worker runs it
 * inside writeAndClaim's claim lock; called on its own (tests, bench) it is
 * its own transaction and must not race another claim for the same
 * subscriptions.
 */
export async function claimDeliveries(db: pg.Pool | pg.PoolClient, opts: ClaimOptions): Promise<ClaimedRow[]> {
  return (await claimWindow(db, opts)).claimed;
}

/** claimDeliveries, and where the next claim's window starts (nextWindowStart). */
export async function claimWindow(db: pg.Pool | pg.PoolClient, opts: ClaimOptions): Promise<{ claimed: ClaimedRow[]; after: string }> {
  const { rows } = await db.query<ClaimedRow & { windowEnd: string | null }>({
    text: `WITH ${claimCtes({ owner: "$1", limit: "$2", perSub: "$3", exclude: "$4", slack: "$5", answered: "$6", held: "$7", after: "$8", frozen: opts.frozen })}
     SELECT c.*, ${windowEndSelect} FROM (SELECT 1) one LEFT JOIN claimed c ON true`,
    values: [opts.owner, ...claimParams(opts)],
  });
  const claimed = rows.filter((r) => r.id !== null);
  return { claimed, after: nextWindowStart(claimed, opts.limit, rows[0]?.windowEnd ?? null) };
}
