// The dead-letter queue: now (depth by subscription and reason from the
// trigger-kept delivery_state_counts, oldest by one seek each on the
// deliveries_dlq partial index; the rows of a few subscriptions in one pass
// over that index) and sampled (dlq_samples, dlq_sample_groups, written by the
// sampler for the charts, the alerts and the breakdown of large queues).
import "server-only";
import { execute, queryRows, sql, type LedgerDb } from "../read/db";
import { GLOBAL_SCOPE, isScoped, scopeWhere, subscriptionInScope, type Scope } from "../../tenants/scope";

export type DlqGroupRow = {
  subscriptionId: string;
  reason: string | null;
  errorClass: string | null;
  statusCode: number | null;
  depth: number;
  oldestAt: Date | null;
};

type GroupRow = { subscription_id: string; reason: string | null; error_class: string | null; status_code: number | null; depth: number; oldest_at: Date | null };
const toGroup = (r: GroupRow): DlqGroupRow => ({
  subscriptionId: r.subscription_id,
  reason: r.reason,
  errorClass: r.error_class,
  statusCode: r.status_code,
  depth: Number(r.depth),
  oldestAt: r.oldest_at,
});

/** True when a sample was taken within `minGapMs` before `at`. */
export async function hasFreshDlqSample(db: LedgerDb, at: Date, minGapMs: number): Promise<boolean> {
  const rows = await queryRows<{ fresh: boolean | null }>(
    db,
    sql`SELECT max(sampled_at) > ${at}::timestamptz - make_interval(secs => ${minGapMs}::float8 / 1000) AS fresh FROM dlq_samples`,
  );
  return rows[0]?.fresh === true;
}

/**
 * Records one sample at `at`: the total and the groups a redrive filters on
 * (subscription, reason, error class, status), in one pass over the
 * dead-letter rows. Returns the depth.
 */
export async function takeDlqSample(db: LedgerDb, at: Date): Promise<number> {
  const rows = await queryRows<{ depth: number }>(
    db,
    sql`WITH g AS (
          SELECT subscription_id, dead_letter_reason AS reason, last_error_class AS error_class,
                 last_status_code AS status_code, count(*)::int AS depth, min(dead_lettered_at) AS oldest_at
            FROM deliveries WHERE state = 'dead_letter'
           GROUP BY 1, 2, 3, 4
        ), total AS (
          INSERT INTO dlq_samples (sampled_at, depth, oldest_at)
          SELECT ${at}, coalesce(sum(depth), 0)::int, min(oldest_at) FROM g
          RETURNING depth
        ), groups AS (
          INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
          SELECT ${at}, subscription_id, reason, error_class, status_code, depth, oldest_at FROM g
        )
        SELECT depth FROM total`,
  );
  return rows[0].depth;
}

/** Drops samples older than `retention` and group rows older than `groupRetention` (intervals, e.g. '7 days'). */
export async function pruneDlqSamples(db: LedgerDb, at: Date, retention: string, groupRetention: string): Promise<void> {
  await execute(db, sql`DELETE FROM dlq_samples WHERE sampled_at < ${at}::timestamptz - ${retention}::interval`);
  await execute(db, sql`DELETE FROM dlq_sample_groups WHERE sampled_at < ${at}::timestamptz - ${groupRetention}::interval`);
}

/** When the newest sample was taken; null when there is none. */
export async function findLatestDlqSampleAt(db: LedgerDb): Promise<Date | null> {
  const rows = await queryRows<{ sampled_at: Date }>(db, sql`SELECT sampled_at FROM dlq_samples ORDER BY sampled_at DESC LIMIT 1`);
  return rows[0]?.sampled_at ?? null;
}

/** The groups of the sample taken at `sampledAt` (dlq_sample_groups pk); only `subscriptionIds`' when given. */
export async function findDlqSampleGroups(db: LedgerDb, sampledAt: Date, scope: Scope = GLOBAL_SCOPE, subscriptionIds: string[] | null = null): Promise<DlqGroupRow[]> {
  const rows = await queryRows<GroupRow>(
    db,
    sql`SELECT subscription_id, reason, error_class, status_code, depth, oldest_at FROM dlq_sample_groups
         WHERE sampled_at = ${sampledAt} AND ${subscriptionInScope(scope, "subscription_id")}
           AND (${subscriptionIds}::text[] IS NULL OR subscription_id = ANY(${subscriptionIds}::text[]))`,
  );
  return rows.map(toGroup);
}

/**
 * The same groups computed now from the dead-letter rows: the deliveries_dlq
 * range of each subscription, and a heap read per dead letter for its last
 * error class and status, so the time grows with the number of dead letters
 * (BENCHMARKS.md F11). Only `subscriptionIds`' when given.
 */
export async function findDlqGroupsLive(db: LedgerDb, scope: Scope = GLOBAL_SCOPE, subscriptionIds: string[] | null = null): Promise<DlqGroupRow[]> {
  const rows = await queryRows<GroupRow>(
    db,
    sql`SELECT subscription_id, dead_letter_reason AS reason, last_error_class AS error_class, last_status_code AS status_code,
               count(*)::int AS depth, min(dead_lettered_at) AS oldest_at
          FROM deliveries
         WHERE state = 'dead_letter' AND ${subscriptionInScope(scope, "subscription_id")}
           AND (${subscriptionIds}::text[] IS NULL OR subscription_id = ANY(${subscriptionIds}::text[]))
         GROUP BY 1, 2, 3, 4`,
  );
  return rows.map(toGroup);
}

export type DlqPairRow = { subscriptionId: string; reason: string | null; depth: number; oldestAt: Date | null };

/**
 * The DLQ now, by subscription and reason: the depth from delivery_state_counts
 * (kept by the deliveries triggers in the transaction of every change,
 * migration 0006, so a resolve, a redrive or a new dead letter is counted from
 * its commit), read in time bounded by the number of subscriptions, not of dead
 * letters. Reason null stands for a NULL or empty dead_letter_reason (the
 * counters key both as ''). Only `subscriptionId`'s, or `subscriptionIds`',
 * when given.
 *
 * With `oldest`, also the oldest dead letter of each pair, by one seek per
 * month on deliveries_dlq (subscription_id, dead_letter_reason,
 * dead_lettered_at), in the same statement (so of the same snapshot): about 23
 * buffer reads a pair on seven months, which for many small pairs costs more
 * than reading their rows (BENCHMARKS.md F11). No writer
 * dead-letters without a reason, so that arm is one subquery (a range scan,
 * not a seek) rather than two: every subquery is planned once per month.
 */
export async function findDlqPairs(
  db: LedgerDb,
  opts: { scope?: Scope; subscriptionId?: string | null; subscriptionIds?: string[] | null; oldest: boolean },
): Promise<DlqPairRow[]> {
  const oldest = opts.oldest
    ? sql`CASE WHEN g.reason = '' THEN (SELECT min(d.dead_lettered_at) FROM deliveries d
                                         WHERE d.subscription_id = g.subscription_id AND d.state = 'dead_letter'
                                           AND (d.dead_letter_reason IS NULL OR d.dead_letter_reason = ''))
               ELSE (SELECT min(d.dead_lettered_at) FROM deliveries d
                      WHERE d.subscription_id = g.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = g.reason)
          END`
    : sql`NULL::timestamptz`;
  const subscriptionId = opts.subscriptionId ?? null;
  const subscriptionIds = opts.subscriptionIds ?? null;
  const rows = await queryRows<{ subscription_id: string; reason: string; depth: number | bigint | string; oldest_at: Date | null }>(
    db,
    sql`SELECT g.subscription_id, g.reason, g.depth, ${oldest} AS oldest_at
          FROM (SELECT subscription_id, reason, sum(n)::bigint AS depth FROM delivery_state_counts
                 WHERE state = 'dead_letter' AND ${subscriptionInScope(opts.scope ?? GLOBAL_SCOPE, "subscription_id")}
                   AND (${subscriptionId}::text IS NULL OR subscription_id = ${subscriptionId})
                   AND (${subscriptionIds}::text[] IS NULL OR subscription_id = ANY(${subscriptionIds}::text[]))
                 GROUP BY 1, 2 HAVING sum(n) > 0) g`,
  );
  return rows.map((r) => ({ subscriptionId: r.subscription_id, reason: r.reason === "" ? null : r.reason, depth: Number(r.depth), oldestAt: r.oldest_at }));
}

/**
 * The oldest dead letter of each reason ('' for a NULL or empty one), the whole DLQ's, each found the cheaper of two
 * ways (the caller chooses from the counters): `walk`, the reasons common among the dead letters, by walking the
 * deliveries_dlq_time partial index (dead_lettered_at) from its start to the first of that reason in each month,
 * which costs the older dead letters of other reasons; `seek`, each pair of a rare reason, by the seek per month on
 * deliveries_dlq that findDlqPairs's `oldest` makes. Either way a poll does not read every subscription's rows.
 * Unscoped only: a district's is the oldest of its own pairs (findDlqPairs with `oldest`).
 */
export async function findDlqOldestByReason(
  db: LedgerDb,
  opts: { walk: string[]; seek: { subscriptionId: string; reason: string }[] },
): Promise<Map<string, Date | null>> {
  const rows = await queryRows<{ reason: string; oldest_at: Date | null }>(
    db,
    sql`SELECT r.reason,
               (SELECT min(d.dead_lettered_at) FROM deliveries d
                 WHERE d.state = 'dead_letter' AND coalesce(d.dead_letter_reason, '') = r.reason) AS oldest_at
          FROM unnest(${opts.walk}::text[]) r(reason)
        UNION ALL
        SELECT p.reason,
               CASE WHEN p.reason = '' THEN (SELECT min(d.dead_lettered_at) FROM deliveries d
                                              WHERE d.subscription_id = p.subscription_id AND d.state = 'dead_letter'
                                                AND (d.dead_letter_reason IS NULL OR d.dead_letter_reason = ''))
                    ELSE (SELECT min(d.dead_lettered_at) FROM deliveries d
                           WHERE d.subscription_id = p.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = p.reason)
               END
          FROM unnest(${opts.seek.map((p) => p.subscriptionId)}::text[], ${opts.seek.map((p) => p.reason)}::text[]) p(subscription_id, reason)`,
  );
  const oldest = new Map<string, Date | null>();
  for (const r of rows) {
    const cur = oldest.get(r.reason) ?? null;
    oldest.set(r.reason, !cur ? r.oldest_at : !r.oldest_at || cur < r.oldest_at ? cur : r.oldest_at);
  }
  return oldest;
}

export type DlqHistoryRow = { at: Date; depth: number; oldestAgeSeconds: number | null };

/**
 * Samples between `since` and `until` in buckets of `bucketSeconds`: the deepest depth and oldest age of each (dlq_samples pk).
 * For a scoped caller the totals are its tenant's: each sample's groups of its subscriptions summed (a sample where it
 * had none counts 0), since dlq_samples holds the depth of every tenant together. Those groups are read subscription
 * by subscription by dlq_sample_groups_sub (subscription, time) within the range (OFFSET 0 keeps the planner from
 * flattening that into a join, which it would rather serve by a scan of every district's groups), then matched to the
 * samples: joined the other way, every group of every sample (one per subscription and reason with dead letters, in
 * every district) was read to be filtered, or the district's groups of the whole retention.
 */
export async function findDlqHistoryRows(db: LedgerDb, since: Date, until: Date, bucketSeconds: number, scope: Scope = GLOBAL_SCOPE): Promise<DlqHistoryRow[]> {
  const source = isScoped(scope)
    ? sql`(SELECT x.sampled_at, coalesce(g.depth, 0)::int AS depth, g.oldest_at
             FROM dlq_samples x
             LEFT JOIN (SELECT g.sampled_at, sum(g.depth) AS depth, min(g.oldest_at) AS oldest_at
                          FROM subscriptions s
                          CROSS JOIN LATERAL (SELECT g.sampled_at, g.depth, g.oldest_at FROM dlq_sample_groups g
                                               WHERE g.subscription_id = s.id AND g.sampled_at >= ${since} AND g.sampled_at <= ${until}
                                              OFFSET 0) g
                         WHERE ${scopeWhere(scope, "s.tenant")}
                         GROUP BY g.sampled_at) g ON g.sampled_at = x.sampled_at
            WHERE x.sampled_at >= ${since} AND x.sampled_at <= ${until}) dlq_samples`
    : sql`dlq_samples`;
  const rows = await queryRows<{ at: Date; depth: number; oldest_age: number | null }>(
    db,
    sql`SELECT date_bin(make_interval(secs => ${bucketSeconds}::float8), sampled_at, TIMESTAMPTZ '2000-01-01') AS at,
               max(depth)::int AS depth,
               max(EXTRACT(EPOCH FROM sampled_at - oldest_at))::float8 AS oldest_age
          FROM ${source} WHERE sampled_at >= ${since} AND sampled_at <= ${until}
         GROUP BY 1 ORDER BY 1`,
  );
  return rows.map((r) => ({ at: r.at, depth: r.depth, oldestAgeSeconds: r.oldest_age === null ? null : Number(r.oldest_age) }));
}

export type DlqReasonGroup = { subscriptionId: string; name: string; subscriptionState: string; reason: string | null; depth: number; oldestAgeSeconds: number };

/** Live depth and oldest age by subscription and reason, with each subscription's name and state (the CLI's `hookledger dlq`). */
export async function findDlqByReason(db: LedgerDb): Promise<DlqReasonGroup[]> {
  const rows = await queryRows<{ subscription_id: string; name: string; state: string; reason: string | null; depth: number; oldest_age: number }>(
    db,
    sql`SELECT g.subscription_id, s.name, s.state, g.reason, g.depth, g.oldest_age
          FROM (SELECT subscription_id, dead_letter_reason AS reason, count(*)::int AS depth,
                       floor(extract(epoch FROM now() - min(dead_lettered_at)))::int AS oldest_age
                  FROM deliveries WHERE state = 'dead_letter'
                 GROUP BY subscription_id, dead_letter_reason) g
          JOIN subscriptions s ON s.id = g.subscription_id
         ORDER BY g.depth DESC, g.subscription_id, g.reason`,
  );
  return rows.map((r) => ({
    subscriptionId: r.subscription_id,
    name: r.name,
    subscriptionState: r.state,
    reason: r.reason,
    depth: r.depth,
    oldestAgeSeconds: r.oldest_age,
  }));
}
