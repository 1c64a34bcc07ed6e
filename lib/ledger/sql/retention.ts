// Retention (docs/DESIGN.md, Retention): the statements that find and remove
// finished work older than the policy, one bounded batch per statement, so each
// runs in its own short transaction and no lock is held for the whole run.
//
//   deliveries  delivered or resolved, finished (greatest(delivered_at,
//               resolved_at)) before the cutoff of their event's tenant, with
//               their attempts and the items of finished redrive batches that
//               name them. Walked by the partial index deliveries_finished
//               (migration 0022), oldest first, with a keyset, so a batch reads
//               only expired finished rows: pending, scheduled, in-flight and
//               dead-lettered rows are never read, locked or removed. A row an
//               operator resends while the batch runs is re-checked under its
//               row lock (FOR UPDATE re-evaluates the state) and kept.
//   events      older than their tenant's cutoff with no delivery left (so an
//               event a dead letter or a pending delivery needs is kept), walked
//               per tenant by events_tenant_created.
//
// The counters stay exact without help: delivery_state_counts is kept by the
// statement-level delete trigger (migration 0006), so the delivered and
// resolved counts fall by what was removed and every other state is untouched;
// the per-minute and hourly attempt rollups (attempt_stats_minute/hour) are
// aggregates written as attempts arrive and are never recomputed from the
// attempts table, so removing old attempts leaves them as they were. An attempt
// the rollup has not folded yet (its id above the rollup's watermark) keeps its
// delivery for the next run, so no attempt is removed before it is counted.
import "server-only";
import { empty, execute, iso, raw, queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import { ident, PartitionDropRefused } from "./partitions";
import { EVENT_KEYS_LOCK } from "./backfill";

/** Taken before a statement removes event keys, in its transaction (migration 0031: it holds a backfill item's event). */
const lockEventKeys = (db: LedgerDb) => execute(db, sql`SELECT pg_advisory_xact_lock(${EVENT_KEYS_LOCK}::bigint)`);

/** Deliveries read per batch: a few thousand rows locked for tens of milliseconds. */
export const RETENTION_BATCH = 2_000;
/** One retention runner at a time across processes: a session advisory lock held for the run. */
export const RETENTION_LOCK = 7_431_901;

/** The days that apply to each tenant: `overrides` by tenant id, `defaultDays` to the rest (and to events without a tenant). */
export type TenantDays = { defaultDays: number; overrides: { tenant: string; days: number }[] };

/** The cutoff of the tenant in `tenantExpr`: now() minus its override's days, or the default's. */
function cutoffOf(p: TenantDays, tenantExpr: Sql): Sql {
  if (p.overrides.length === 0) return sql`(now() - make_interval(days => ${p.defaultDays}::int))`;
  const tenants = p.overrides.map((o) => o.tenant);
  const days = p.overrides.map((o) => o.days);
  return sql`(now() - make_interval(days => coalesce((SELECT ov.days FROM unnest(${tenants}::text[], ${days}::int[]) AS ov(tenant, days) WHERE ov.tenant = ${tenantExpr}), ${p.defaultDays}::int)))`;
}

/** The latest cutoff of any tenant: rows finished after it are kept whatever their tenant. */
const latestCutoff = (p: TenantDays) => sql`(now() - make_interval(days => ${Math.min(p.defaultDays, ...p.overrides.map((o) => o.days))}::int))`;

/** The rollup's watermark: attempts at or below it are in attempt_stats_minute/hour (lib/rollups/sampler.ts). */
const ROLLED_UP = sql`coalesce((SELECT r.last_id FROM dashboard_rollups r WHERE r.name = 'attempt_stats'), 0)`;
/**
 * The oldest time of an attempt the rollup has not folded (now() when there is
 * none): the check below then reads only the months from it on (run-time
 * partition pruning) instead of probing every month for every delivery.
 */
const UNROLLED_SINCE = sql`(SELECT coalesce(min(a.created_at), now()) FROM attempts a WHERE a.id > ${ROLLED_UP})`;

/** The tenant of delivery `d` is its event's: a run joins events (alias e) only when some tenant has its own days. */
const eventJoin = (p: TenantDays) => (p.overrides.length > 0 ? sql`JOIN events e ON e.id = d.event_id AND e.created_at = d.event_at` : empty);

/**
 * Whether the delivery in `alias` may go: finished before its event's tenant's
 * cutoff (the tenant in `tenant`), every attempt rolled up, not in a running
 * batch.
 */
const expiredAs = (p: TenantDays, alias: string, tenant: Sql) => {
  const d = raw(alias);
  return sql`${d}.state IN ('delivered', 'resolved')
      AND greatest(${d}.delivered_at, ${d}.resolved_at) < ${cutoffOf(p, tenant)}
      AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = ${d}.id AND a.created_at >= ${UNROLLED_SINCE} AND a.id > ${ROLLED_UP})
      AND NOT EXISTS (SELECT 1 FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id
                       WHERE i.delivery_id = ${d}.id AND b.status = 'running')`;
};

/** Whether delivery `d` may go (expiredAs), its tenant read from its event `e` (eventJoin). */
const deliveryExpired = (p: TenantDays) => expiredAs(p, "d", sql`e.tenant`);

/**
 * Where a walk stands: the last row's time and id. The time is Postgres's own
 * text of it (microseconds): a JS Date keeps milliseconds, so the last row
 * would compare after itself and a row the batch kept (still needed, or
 * locked) would be found again forever.
 */
export type Keyset = { at: string | null; id: string };
export const KEYSET_START: Keyset = { at: null, id: "" };

export type DeliveryBatch = { scanned: number; deliveries: number; attempts: number; items: number; next: Keyset };

/** The months of attempts a run swaps after its delivery batches ([from, to), null: none): their attempts are not deleted row by row. */
export type SwappedSpan = { from: Date; to: Date } | null;

/**
 * Removes one batch of expired deliveries (with their attempts and finished
 * batches' items) after `after` in finish order; returns the counts and where
 * the next batch starts (scanned = 0: the walk is done). Rows another
 * transaction holds are skipped (SKIP LOCKED) and left for the next run.
 * Attempts inside `swapped` are left to the month swap that follows
 * (lib/retention/partitions.ts, swapExpiredMonths), which keeps only
 * attempts whose delivery is still there.
 */
export async function removeExpiredDeliveries(db: LedgerDb, p: TenantDays, after: Keyset, limit = RETENTION_BATCH, swapped: SwappedSpan = null): Promise<DeliveryBatch> {
  // An attempt is written in the transaction that records its delivery's outcome (delivered_at, resolved_at: now()),
  // so an expired delivery's attempts are all older than the cutoff: the months after it are not probed (a day's
  // slack). An attempt dated otherwise (a fixture's) is not removed here; it is never read without its delivery, and
  // its month's swap removes it once that month is old. Those inside `swapped` are the swap's.
  const outside = sql`AND a.created_at < ${latestCutoff(p)} + interval '1 day' ${swapped ? sql`AND (a.created_at < ${swapped.from} OR a.created_at >= ${swapped.to})` : empty}`;
  const [r] = await queryRows<{ scanned: number; deliveries: number; attempts: number; items: number; last_at: string | null; last_id: string | null }>(
    db,
    sql`WITH scan AS (
          SELECT d.id, d.event_at, greatest(d.delivered_at, d.resolved_at) AS fin FROM deliveries d
           WHERE d.state IN ('delivered', 'resolved')
             AND greatest(d.delivered_at, d.resolved_at) < ${latestCutoff(p)}
             AND (greatest(d.delivered_at, d.resolved_at), d.id) > (coalesce(${after.at}::timestamptz, '-infinity'), ${after.id}::text)
           ORDER BY greatest(d.delivered_at, d.resolved_at), d.id
           LIMIT ${limit}::int),
        victims AS (
          SELECT d.id, d.event_at FROM deliveries d ${eventJoin(p)}
           WHERE (d.id, d.event_at) IN (SELECT id, event_at FROM scan) AND ${deliveryExpired(p)}
           ORDER BY d.id
             FOR UPDATE OF d SKIP LOCKED),
        items AS (DELETE FROM redrive_batch_items i USING victims v WHERE i.delivery_id = v.id RETURNING 1),
        att AS (DELETE FROM attempts a USING victims v WHERE a.delivery_id = v.id ${outside} RETURNING 1),
        del AS (DELETE FROM deliveries d USING victims v WHERE d.id = v.id AND d.event_at = v.event_at RETURNING 1),
        last AS (SELECT fin, id FROM scan ORDER BY fin DESC, id DESC LIMIT 1)
        SELECT (SELECT count(*) FROM scan)::int AS scanned, (SELECT count(*) FROM del)::int AS deliveries,
               (SELECT count(*) FROM att)::int AS attempts, (SELECT count(*) FROM items)::int AS items,
               (SELECT fin::text FROM last) AS last_at, (SELECT id FROM last) AS last_id`,
  );
  return {
    scanned: r.scanned,
    deliveries: r.deliveries,
    attempts: r.attempts,
    items: r.items,
    next: r.last_id ? { at: r.last_at, id: r.last_id } : after,
  };
}

/** What removeExpiredDeliveries would remove, all batches together (a dry run; changes nothing). */
export async function countExpiredDeliveries(db: LedgerDb, p: TenantDays): Promise<{ deliveries: number; attempts: number }> {
  const [r] = await queryRows<{ deliveries: number; attempts: number }>(
    db,
    sql`WITH v AS (
          SELECT d.id FROM deliveries d ${eventJoin(p)}
           WHERE d.state IN ('delivered', 'resolved') AND greatest(d.delivered_at, d.resolved_at) < ${latestCutoff(p)} AND ${deliveryExpired(p)})
        SELECT (SELECT count(*) FROM v)::int AS deliveries,
               (SELECT count(*) FROM attempts a WHERE a.delivery_id IN (SELECT id FROM v))::int AS attempts`,
  );
  return r;
}

/** Every tenant named by an event, by a loose scan of events_tenant_created (one seek per tenant), and null for events without one. */
export async function listEventTenants(db: LedgerDb): Promise<(string | null)[]> {
  const rows = await queryRows<{ tenant: string }>(
    db,
    sql`WITH RECURSIVE t AS (
          (SELECT e.tenant FROM events e WHERE e.tenant IS NOT NULL ORDER BY e.tenant LIMIT 1)
          UNION ALL
          SELECT (SELECT e.tenant FROM events e WHERE e.tenant > t.tenant ORDER BY e.tenant LIMIT 1) FROM t WHERE t.tenant IS NOT NULL)
        SELECT tenant FROM t WHERE tenant IS NOT NULL`,
  );
  return [null, ...rows.map((r) => r.tenant)];
}

const tenantIs = (tenant: string | null) => (tenant === null ? sql`e.tenant IS NULL` : sql`e.tenant = ${tenant}`);

/** One tenant's events older than its cutoff, in (created_at, id) order after the keyset: the walk both event steps share. */
const eventScan = (tenant: string | null, cutoff: Sql, after: Keyset, limit: number, extra: Sql = empty) =>
  sql`SELECT e.id, e.created_at FROM events e
       WHERE ${tenantIs(tenant)} AND e.created_at < ${cutoff}
         AND e.created_at >= coalesce(${after.at}::timestamptz, '-infinity')
         AND (e.created_at, e.id) > (coalesce(${after.at}::timestamptz, '-infinity'), ${after.id}::text) ${extra}
       ORDER BY e.created_at, e.id
       LIMIT ${limit}::int`;

/**
 * An event nothing needs any more: no delivery left (whatever its state) and
 * no running batch names it. Read in the statement that removes the event, so
 * in one snapshot: a backfill writes deliveries only while its batch runs, and
 * the batch ends in or after the transaction that wrote its last ones, so the
 * snapshot sees either the running batch or the deliveries. That is what keeps
 * a backfilled delivery's event (deliveries have no foreign key to event_keys,
 * migration 0028). One probe of the event's own month per event (OFFSET 0
 * keeps the subquery per row: as an anti-join it was planned as a hash of
 * every delivery, 2.3 s a batch at 10 M).
 */
const EVENT_UNNEEDED = sql`NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at OFFSET 0)
  AND NOT EXISTS (SELECT 1 FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id WHERE i.event_id = e.id AND b.status = 'running')`;

export type EventBatch = { scanned: number; events: number; items: number; next: Keyset };

/**
 * Removes one batch of a tenant's events older than `days` that no delivery needs; the keyset continues the walk.
 * In the caller's transaction: it takes EVENT_KEYS_LOCK first, held to the commit.
 */
export async function removeExpiredEvents(
  db: LedgerDb,
  tenant: string | null,
  days: number,
  after: Keyset,
  limit = RETENTION_BATCH,
  /** Reads only events received before this (the walk's range ends there). */
  before: Date | null = null,
): Promise<EventBatch> {
  const cutoff = before ? sql`least(now() - make_interval(days => ${days}::int), ${before}::timestamptz)` : sql`(now() - make_interval(days => ${days}::int))`;
  await lockEventKeys(db);
  const [r] = await queryRows<{ scanned: number; events: number; items: number; last_at: string | null; last_id: string | null }>(
    db,
    sql`WITH scan AS (${eventScan(tenant, cutoff, after, limit)}),
        victims AS (
          SELECT e.id FROM events e WHERE e.id IN (SELECT id FROM scan) AND ${EVENT_UNNEEDED}
           ORDER BY e.id
             FOR UPDATE OF e SKIP LOCKED),
        items AS (DELETE FROM redrive_batch_items i USING victims v WHERE i.event_id = v.id RETURNING 1),
        del AS (DELETE FROM events e USING victims v WHERE e.id = v.id RETURNING 1),
        -- The id's key goes with the event (migration 0021): the ledger forgets the id (a data-modifying CTE runs unreferenced).
        keys AS (DELETE FROM event_keys k USING victims v WHERE k.id = v.id RETURNING 1),
        last AS (SELECT created_at, id FROM scan ORDER BY created_at DESC, id DESC LIMIT 1)
        SELECT (SELECT count(*) FROM scan)::int AS scanned, (SELECT count(*) FROM del)::int AS events,
               (SELECT count(*) FROM items)::int AS items,
               (SELECT created_at::text FROM last) AS last_at, (SELECT id FROM last) AS last_id`,
  );
  return { scanned: r.scanned, events: r.events, items: r.items, next: r.last_id ? { at: r.last_at, id: r.last_id } : after };
}

/**
 * A dry run's count of the events that would go, every tenant's in one
 * statement: those nothing needs now, plus those whose every delivery the
 * delivery step would remove first.
 */
export async function countExpiredEvents(db: LedgerDb, p: TenantDays): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM events e WHERE e.created_at < ${latestCutoff(p)} AND ${eventRemovable(p, cutoffOf(p, sql`e.tenant`))}`,
  );
  return r.n;
}

/**
 * An event (alias e) a run would remove: created before `cutoff`, nothing
 * running names it, every delivery it has would go first. Its deliveries'
 * tenant is the event's own (e), so the expiry below reads it from e.
 */
export const eventRemovable = (p: TenantDays, cutoff: Sql) =>
  sql`(e.created_at < ${cutoff}
       AND NOT EXISTS (SELECT 1 FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id WHERE i.event_id = e.id AND b.status = 'running')
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at AND NOT (${deliveryExpired(p)})))`;

// ---- the policy's overrides ----

export type TenantOverride = { tenant: string; retentionDays: number; payloadRetentionDays: number | null; updatedBy: string; updatedAt: string };

export async function listOverrides(db: LedgerDb): Promise<TenantOverride[]> {
  const rows = await queryRows<{ tenant: string; retention_days: number; payload_retention_days: number | null; updated_by: string; updated_at: Date }>(
    db,
    sql`SELECT tenant, retention_days, payload_retention_days, updated_by, updated_at FROM retention_policies ORDER BY tenant`,
  );
  return rows.map((r) => ({
    tenant: r.tenant,
    retentionDays: r.retention_days,
    payloadRetentionDays: r.payload_retention_days,
    updatedBy: r.updated_by,
    updatedAt: iso(r.updated_at)!,
  }));
}

/** Sets a tenant's override (null days: removes it); returns the override before the change, locked for the caller's transaction. */
export async function putOverride(
  db: LedgerDb,
  tenant: string,
  days: { retentionDays: number; payloadRetentionDays: number | null } | null,
  actor: string,
): Promise<{ retentionDays: number; payloadRetentionDays: number | null } | null> {
  const [before] = await queryRows<{ retention_days: number; payload_retention_days: number | null }>(
    db,
    sql`SELECT retention_days, payload_retention_days FROM retention_policies WHERE tenant = ${tenant} FOR UPDATE`,
  );
  if (days === null) await queryRows(db, sql`DELETE FROM retention_policies WHERE tenant = ${tenant} RETURNING tenant`);
  else
    await queryRows(
      db,
      sql`INSERT INTO retention_policies (tenant, retention_days, payload_retention_days, updated_by) VALUES (${tenant}, ${days.retentionDays}::int, ${days.payloadRetentionDays}::int, ${actor})
          ON CONFLICT (tenant) DO UPDATE SET retention_days = EXCLUDED.retention_days, payload_retention_days = EXCLUDED.payload_retention_days,
                                             updated_by = EXCLUDED.updated_by, updated_at = now()
          RETURNING tenant`,
    );
  return before ? { retentionDays: before.retention_days, payloadRetentionDays: before.payload_retention_days } : null;
}

// ---- the record of each run ----

export type RetentionCounts = { deliveries: number; attempts: number; events: number; expunged: number; partitions: number };
export const ZERO_COUNTS: RetentionCounts = { deliveries: 0, attempts: 0, events: 0, expunged: 0, partitions: 0 };

/** What a run's record says about itself, in its columns' names too. */
type RunHead = {
  id: string;
  trigger: "schedule" | "manual";
  actor: string;
  status: "running" | "finished" | "failed";
  policy: unknown;
  error: string | null;
};

export type RetentionRunRow = RunHead & {
  startedAt: string;
  finishedAt: string | null;
} & RetentionCounts;

const RUN_COLUMNS = sql`id, trigger, actor, status, policy, error, started_at, finished_at, deliveries_removed, attempts_removed, events_removed, events_expunged, partitions_dropped`;
type RunDbRow = RunHead & {
  started_at: Date;
  finished_at: Date | null;
  deliveries_removed: number;
  attempts_removed: number;
  events_removed: number;
  events_expunged: number;
  partitions_dropped: number;
};
const toRun = (r: RunDbRow): RetentionRunRow => ({
  id: r.id,
  trigger: r.trigger,
  actor: r.actor,
  status: r.status,
  policy: r.policy,
  error: r.error,
  startedAt: iso(r.started_at)!,
  finishedAt: iso(r.finished_at),
  deliveries: r.deliveries_removed,
  attempts: r.attempts_removed,
  events: r.events_removed,
  expunged: r.events_expunged,
  partitions: r.partitions_dropped,
});

export async function insertRetentionRun(db: LedgerDb, r: { id: string; trigger: "schedule" | "manual"; actor: string; policy: unknown }): Promise<RetentionRunRow> {
  const [row] = await queryRows<RunDbRow>(
    db,
    sql`INSERT INTO retention_runs (id, trigger, actor, policy) VALUES (${r.id}, ${r.trigger}, ${r.actor}, ${JSON.stringify(r.policy)}::jsonb) RETURNING ${RUN_COLUMNS}`,
  );
  return toRun(row);
}

/** Adds a batch's counts to its run (in the batch's transaction, so the record counts exactly what committed). */
export async function addRetentionCounts(db: LedgerDb, id: string, c: Partial<RetentionCounts>): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE retention_runs SET deliveries_removed = deliveries_removed + ${c.deliveries ?? 0}::int, attempts_removed = attempts_removed + ${c.attempts ?? 0}::int,
               events_removed = events_removed + ${c.events ?? 0}::int, events_expunged = events_expunged + ${c.expunged ?? 0}::int,
               partitions_dropped = partitions_dropped + ${c.partitions ?? 0}::int
         WHERE id = ${id} RETURNING id`,
  );
}

export async function finishRetentionRun(db: LedgerDb, id: string, error: string | null = null): Promise<RetentionRunRow> {
  const [row] = await queryRows<RunDbRow>(
    db,
    sql`UPDATE retention_runs SET status = ${error ? "failed" : "finished"}, error = ${error}, finished_at = now() WHERE id = ${id} RETURNING ${RUN_COLUMNS}`,
  );
  return toRun(row);
}

/** What a run left `running` by a process that is gone reads as, until the next run records it (failAbandonedRuns). */
export const ABANDONED = "its process stopped before it finished (no runner holds the retention lock); the next run records it as failed and removes the rest";

/**
 * The latest runs. A run whose record says `running` while no session holds
 * the retention lock has lost its process (killed, crashed, its database
 * connection cut): every run holds the lock from before its record is written
 * until after it is finished. It reads as failed, with why, at once, instead
 * of `running` until the next run.
 */
export async function listRetentionRuns(db: LedgerDb, limit = 10): Promise<RetentionRunRow[]> {
  const rows = await queryRows<RunDbRow & { abandoned: boolean }>(
    db,
    sql`SELECT ${RUN_COLUMNS},
               status = 'running' AND NOT EXISTS (
                 -- pg_locks shows a bigint advisory key as its high and low 32 bits (classid, objid), objsubid 1.
                 SELECT 1 FROM pg_locks l
                  WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.classid = (${RETENTION_LOCK}::bigint >> 32)::oid AND l.objid = (${RETENTION_LOCK}::bigint & 4294967295)::oid AND l.objsubid = 1) AS abandoned
          FROM retention_runs ORDER BY started_at DESC, id DESC LIMIT ${limit}::int`,
  );
  return rows.map((r) => (r.abandoned ? { ...toRun(r), status: "failed" as const, error: ABANDONED } : toRun(r)));
}

/** When the daily run last started (finished or not), for the scheduler. */
export async function lastScheduledRunAt(db: LedgerDb): Promise<Date | null> {
  const [r] = await queryRows<{ at: Date | null }>(db, sql`SELECT max(started_at) AS at FROM retention_runs WHERE trigger = 'schedule'`);
  return r?.at ?? null;
}

/** A run left `running` by a process that died (its lock is gone, so nothing is running): marked failed by the next runner. */
export async function failAbandonedRuns(db: LedgerDb): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`UPDATE retention_runs SET status = 'failed', error = 'the process running it stopped before it finished', finished_at = now()
         WHERE status = 'running' RETURNING id`,
  );
  return rows.length;
}

// ---- what is kept ----

export type OldestKept = { event: string | null; delivery: string | null; attempt: string | null; finishedDelivery: string | null };

/** The oldest row of each ledger table (index seeks where there is an index; attempts by its smallest id, the oldest written, of those with a delivery: one a month not yet swapped still holds is not kept data). */
export async function findOldestKept(db: LedgerDb): Promise<OldestKept> {
  const [r] = await queryRows<{ event: Date | null; delivery: Date | null; attempt: Date | null; finished: Date | null }>(
    db,
    sql`SELECT (SELECT min(created_at) FROM events) AS event,
               (SELECT created_at FROM deliveries ORDER BY id LIMIT 1) AS delivery,
               (SELECT a.started_at FROM attempts a WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id) ORDER BY a.id LIMIT 1) AS attempt,
               (SELECT greatest(delivered_at, resolved_at) FROM deliveries WHERE state IN ('delivered', 'resolved')
                 ORDER BY greatest(delivered_at, resolved_at), id LIMIT 1) AS finished`,
  );
  return { event: iso(r.event), delivery: iso(r.delivery), attempt: iso(r.attempt), finishedDelivery: iso(r.finished) };
}

/** rows: the planner's estimate (pg_class.reltuples), null until the table (or, partitioned, one of its partitions) is first analysed. */
export type TableSize = { name: string; rows: number | null; bytes: number };

/** The ledger tables' sizes (heap, indexes and TOAST; a partitioned table's summed over its partitions) and row estimates, from the catalog: no scan. */
export async function findLedgerTableSizes(db: LedgerDb): Promise<TableSize[]> {
  const rows = await queryRows<{ name: string; rows: number | string | null; bytes: number | string }>(
    db,
    sql`SELECT c.relname AS name,
               CASE WHEN c.relkind = 'p' THEN (SELECT sum(k.reltuples) FILTER (WHERE k.reltuples >= 0) FROM pg_inherits i JOIN pg_class k ON k.oid = i.inhrelid WHERE i.inhparent = c.oid)
                    WHEN c.reltuples >= 0 THEN c.reltuples END::bigint AS rows,
               CASE WHEN c.relkind = 'p' THEN (SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) FROM pg_inherits i WHERE i.inhparent = c.oid)
                    ELSE pg_total_relation_size(c.oid) END::bigint AS bytes
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relname IN ('events', 'deliveries', 'attempts') AND c.relkind IN ('r', 'p')
         ORDER BY c.relname`,
  );
  return rows.map((r) => ({ name: r.name, rows: r.rows === null ? null : Number(r.rows), bytes: Number(r.bytes) }));
}

/** Whether a tenant exists: in the tenants table where there is one, else named by a subscription or an event. */
export async function retentionTenantExists(db: LedgerDb, tenant: string): Promise<boolean> {
  const [t] = await queryRows<{ reg: string | null }>(db, sql`SELECT to_regclass('tenants')::text AS reg`);
  if (t.reg) {
    const [r] = await queryRows<{ found: boolean }>(db, sql`SELECT EXISTS (SELECT 1 FROM tenants WHERE id = ${tenant}) AS found`);
    if (r.found) return true;
  }
  const [r] = await queryRows<{ found: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM subscriptions WHERE tenant = ${tenant}) OR EXISTS (SELECT 1 FROM events WHERE tenant = ${tenant}) AS found`,
  );
  return r.found;
}

// ---- whole month partitions (migration 0021): what a month swap keeps ----

/**
 * An attempt a month swap keeps (alias o): its delivery is still there. The
 * run's delivery months and batches have removed every expired delivery by
 * then, so this keeps exactly the attempts of the deliveries kept (a dead
 * letter's, a delivery finished after its tenant's cutoff, one a batch
 * skipped as locked). For a month ending at `before`, only the deliveries of
 * events before it are read (an attempt is never older than its delivery's
 * event): the months already swapped, small, so one hashed set rather than a
 * probe of every month per attempt.
 */
export const attemptKept = (before: Date | null): Sql =>
  before ? sql`o.delivery_id IN (SELECT d.id FROM deliveries d WHERE d.event_at < ${before})` : sql`EXISTS (SELECT 1 FROM deliveries d WHERE d.id = o.delivery_id)`;

/** The month swap's tenant of delivery o: its event's, read in the event's own month. */
const MONTH_TENANT = sql`(SELECT e.tenant FROM events e WHERE e.id = o.event_id AND e.created_at = o.event_at)`;

/**
 * A delivery a month's compaction keeps (alias o): it has not expired
 * (expiredAs). Never null: the compaction keeps the rows it names and drops
 * the rest.
 */
export const deliveryKept = (p: TenantDays): Sql => sql`NOT coalesce((${expiredAs(p, "o", p.overrides.length > 0 ? MONTH_TENANT : sql`NULL`)}), false)`;

/** How many finished deliveries month `month` holds, counting no further than `limit` (an index-only count). */
export async function countFinishedIn(db: LedgerDb, month: string, limit: number): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${raw(ident(month))} WHERE state IN ('delivered', 'resolved') LIMIT ${limit}::int) x`,
  );
  return r.n;
}

/** Whether deliveries month `month` holds a row its compaction would drop (a finished row not kept). */
export const deliveryGoneIn = (p: TenantDays, month: string): Sql =>
  sql`SELECT 1 FROM ${raw(ident(month))} o WHERE o.state IN ('delivered', 'resolved') AND NOT ${deliveryKept(p)}`;

/** The earliest cutoff of any tenant: a delivery finished before it has expired for every tenant. */
const earliestCutoff = (p: TenantDays) => sql`(now() - make_interval(days => ${Math.max(p.defaultDays, ...p.overrides.map((o) => o.days))}::int))`;

/**
 * The rows of deliveries month `month` that deliveryKept keeps, found through
 * the month's small indexes instead of reading the month: every delivery not
 * finished (the due, in-flight and dead-letter partial indexes), the finished
 * ones from the earliest cutoff on (deliveries_finished), and the older
 * finished ones a running batch or an attempt not yet rolled up names (probed
 * by id). Each is then checked with deliveryKept, so the rows are exactly
 * those `WHERE deliveryKept` reads (test/retention/retention-delivery-months.test.ts).
 */
export const deliveryKeptRows = (p: TenantDays, month: string): Sql => {
  const m = raw(ident(month));
  const kept = deliveryKept(p);
  return sql`SELECT o.* FROM ${m} o WHERE o.state IN ('pending', 'scheduled')
    UNION ALL SELECT o.* FROM ${m} o WHERE o.state = 'in_flight'
    UNION ALL SELECT o.* FROM ${m} o WHERE o.state = 'dead_letter'
    UNION ALL SELECT o.* FROM ${m} o
               WHERE o.state IN ('delivered', 'resolved') AND greatest(o.delivered_at, o.resolved_at) >= ${earliestCutoff(p)} AND ${kept}
    UNION ALL SELECT o.* FROM (SELECT i.delivery_id AS id FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id
                                WHERE b.status = 'running' AND i.delivery_id IS NOT NULL
                               UNION
                               SELECT a.delivery_id FROM attempts a WHERE a.created_at >= ${UNROLLED_SINCE} AND a.id > ${ROLLED_UP}) n
               -- OFFSET 0 keeps this a probe per named id: pulled up, it was planned as a hash join reading the month's whole index.
               CROSS JOIN LATERAL (SELECT o.* FROM ${m} o WHERE o.id = n.id OFFSET 0) o
               WHERE o.state IN ('delivered', 'resolved') AND greatest(o.delivered_at, o.resolved_at) < ${earliestCutoff(p)} AND ${kept}`;
};

/**
 * In a deliveries month's compaction (compactPartition), with the kept rows in
 * the temporary table `kept` and the month locked: takes the dropped
 * deliveries off the state counters (a truncate fires no delete trigger; only
 * finished deliveries are dropped, and the month's deliveries_finished index
 * carries their subscription and state) and removes the finished batches'
 * items that name them. Returns how many deliveries the month drops.
 */
export async function settleDroppedDeliveries(db: LedgerDb, month: string): Promise<number> {
  const m = raw(ident(month));
  const k = raw("kept");
  const [r] = await queryRows<{ dropped: number }>(
    db,
    sql`WITH was AS (SELECT subscription_id, state, count(*) AS n FROM ${m} WHERE state IN ('delivered', 'resolved') GROUP BY 1, 2),
             stays AS (SELECT subscription_id, state, count(*) AS n FROM ${k} WHERE state IN ('delivered', 'resolved') GROUP BY 1, 2),
             gone AS (SELECT w.subscription_id, w.state, w.n - coalesce(s.n, 0) AS n FROM was w LEFT JOIN stays s USING (subscription_id, state)),
             counted AS (
               INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
               SELECT subscription_id, state, '', pg_backend_pid(), -n FROM gone WHERE n <> 0 ORDER BY 1, 2
               ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n
               RETURNING 1),
             items AS (
               DELETE FROM redrive_batch_items i USING redrive_batches b
                WHERE b.id = i.batch_id AND b.status <> 'running'
                  AND EXISTS (SELECT 1 FROM ${m} o WHERE o.id = i.delivery_id)
                  AND NOT EXISTS (SELECT 1 FROM ${k} o WHERE o.id = i.delivery_id)
               RETURNING 1)
        -- counted and items run unreferenced (data-modifying CTEs always do).
        SELECT coalesce((SELECT sum(n) FROM gone), 0)::int AS dropped`,
  );
  return r.dropped;
}

/**
 * An event a month swap keeps (alias o): a delivery still names it, a running
 * redrive batch names it, or its tenant's own days have not run out (an
 * override longer than the default).
 */
export const eventKept = (p: TenantDays, month: { from: Date; to: Date } | null = null): Sql =>
  sql`(o.created_at >= ${cutoffOf(p, sql`o.tenant`)}
       OR ${
         // A month's events are named only by that month's deliveries, already swapped (small): one hashed set.
         month
           ? sql`o.id IN (SELECT d.event_id FROM deliveries d WHERE d.event_at >= ${month.from} AND d.event_at < ${month.to})`
           : sql`EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = o.id AND d.event_at = o.created_at)`
       }
       OR EXISTS (SELECT 1 FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id WHERE i.event_id = o.id AND b.status = 'running'))`;

/**
 * In an events month's swap, after the kept events are copied to `copy`:
 * removes the event_keys rows of the month's events that are not kept (and
 * the finished batches' items naming them), so the ledger forgets their ids.
 *
 * The copy was made from an earlier snapshot. A delivery or a running batch
 * that names one of the dropped events now (a backfill that started after the
 * copy) refuses the swap, and nothing changes: deliveries have no foreign key
 * to event_keys (migration 0028), so this statement is what keeps a delivery
 * from outliving its event. Checked in the statement that removes the keys,
 * so the check and the removal see the same rows; a backfill snapshotting its
 * items meanwhile waits for the swap's commit (EVENT_KEYS_LOCK, taken here and
 * held to it) and then no longer sees the dropped events.
 */
export async function removeDroppedEventKeys(db: LedgerDb, from: Date, to: Date, copy: string): Promise<number> {
  await lockEventKeys(db);
  const copyTable = raw(ident(copy));
  const [r] = await queryRows<{ n: number; named: number }>(
    db,
    // Driven by the few rows that can name a dropped event (the month's kept deliveries, the running batches' items),
    // and the keys removed by one range scan: built on the set of dropped keys, the statement took 4.4 s a month at 10 M.
    sql`WITH named AS (
          SELECT d.event_id AS id FROM deliveries d JOIN event_keys k ON k.id = d.event_id
           WHERE d.event_at >= ${from} AND d.event_at < ${to} AND NOT EXISTS (SELECT 1 FROM ${copyTable} c WHERE c.id = d.event_id)
          UNION
          SELECT i.event_id FROM redrive_batch_items i JOIN redrive_batches b ON b.id = i.batch_id JOIN event_keys k ON k.id = i.event_id
           WHERE b.status = 'running' AND k.created_at >= ${from} AND k.created_at < ${to} AND NOT EXISTS (SELECT 1 FROM ${copyTable} c WHERE c.id = i.event_id)),
        items AS (
          DELETE FROM redrive_batch_items i USING event_keys k
           WHERE i.event_id = k.id AND k.created_at >= ${from} AND k.created_at < ${to}
             AND NOT EXISTS (SELECT 1 FROM ${copyTable} c WHERE c.id = i.event_id) AND NOT EXISTS (SELECT 1 FROM named)
          RETURNING 1),
        del AS (
          DELETE FROM event_keys x
           WHERE x.created_at >= ${from} AND x.created_at < ${to}
             AND NOT EXISTS (SELECT 1 FROM ${copyTable} c WHERE c.id = x.id) AND NOT EXISTS (SELECT 1 FROM named)
          RETURNING 1)
        SELECT (SELECT count(*) FROM del)::int AS n, (SELECT count(*) FROM named)::int AS named`,
  );
  if (r.named > 0) throw new PartitionDropRefused(`${r.named} events the month drops are named by a delivery or a running batch written after its copy`);
  return r.n;
}

/**
 * Removes the attempts in the default partition whose delivery is gone (rows
 * dated outside every month; normally none). The month swaps cover the
 * months; this covers what no month holds.
 */
export async function removeOrphanedDefaultAttempts(db: LedgerDb): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`WITH del AS (DELETE FROM attempts_default o WHERE NOT ${attemptKept(null)} RETURNING 1) SELECT count(*)::int AS n FROM del`,
  );
  return r.n;
}
