// Retention runs (docs/DESIGN.md, Retention): removes finished work older than
// the policy and expunges payloads older than the payload policy, in bounded
// batches, each batch and its counts in one short transaction
// (lib/ledger/sql/retention.ts, expunge.ts). One runner at a time across every
// process: the run holds a session advisory lock on its own connection; a
// second manual run is refused (409) and a second scheduled one skips.
//
// Every run that is not a dry run leaves a retention_runs row (when, by whom,
// the policy it applied, counts per table; never a removed value), written
// first and counted batch by batch, so a run that dies half-way is visible
// (marked failed by the next runner) and the next run finishes the rest. A run
// a person starts also writes a `retention.run` audit row.
import "server-only";
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { PrismaClient } from "../db/prisma";
import { ledgerDb } from "../ledger/read/db";
import { connectGuarded, inTransaction, releaseGuarded } from "../db/client";
import { retryTransaction } from "../db/retry";
import { AppError, fromZod } from "../errors";
import type { Principal } from "../auth/principal";
import { writeAudit } from "../audit";
import { logger } from "../log";
import { rollupAttemptStats } from "../rollups/sampler";
import {
  addRetentionCounts,
  countExpiredDeliveries,
  countExpiredEvents,
  failAbandonedRuns,
  finishRetentionRun,
  insertRetentionRun,
  KEYSET_START,
  lastScheduledRunAt,
  findLedgerTableSizes,
  findOldestKept,
  listEventTenants,
  listOverrides,
  listRetentionRuns,
  putOverride,
  retentionTenantExists,
  removeExpiredDeliveries,
  removeExpiredEvents,
  RETENTION_BATCH,
  RETENTION_LOCK,
  ZERO_COUNTS,
  type Keyset,
  type OldestKept,
  type RetentionCounts,
  type RetentionRunRow,
  type TableSize,
  type TenantDays,
  type TenantOverride,
} from "../ledger/sql/retention";
import { countExpungeable, expungeEvents } from "../ledger/sql/expunge";
import { retentionFromEnv } from "./policy";
import { trackRun } from "./running";
import { listPartitionSizes, swapExpiredMonths, swappedSpan, type MonthTable, type PartitionSize } from "./partitions";
import { ZRetentionOverride, type TRetentionOverride } from "./retention-input";

export type RetentionPolicy = {
  retentionDays: number;
  payloadRetentionDays: number | null;
  overrides: Pick<TenantOverride, "tenant" | "retentionDays" | "payloadRetentionDays">[];
};

/** The environment's days and the tenants' overrides as one policy (what a run applies and records). */
async function currentPolicy(db: pg.Pool | pg.PoolClient): Promise<RetentionPolicy> {
  const env = retentionFromEnv();
  const overrides = (await listOverrides(db)).map((o) => ({ tenant: o.tenant, retentionDays: o.retentionDays, payloadRetentionDays: o.payloadRetentionDays }));
  return { ...env, overrides };
}

const recordDays = (p: RetentionPolicy): TenantDays => ({
  defaultDays: p.retentionDays,
  overrides: p.overrides.map((o) => ({ tenant: o.tenant, days: o.retentionDays })),
});
const daysFor = (p: RetentionPolicy, tenant: string | null) => p.overrides.find((o) => o.tenant === tenant)?.retentionDays ?? p.retentionDays;
/** A tenant's payload days: its override's (null there means none for that tenant), else the environment's. */
const payloadDaysFor = (p: RetentionPolicy, tenant: string | null) => {
  const o = p.overrides.find((x) => x.tenant === tenant);
  return o ? o.payloadRetentionDays : p.payloadRetentionDays;
};

export type RetentionReport = {
  /** rr_…; null for a dry run, which records nothing. */
  id: string | null;
  dryRun: boolean;
  trigger: "schedule" | "manual";
  by: string;
  /** preview: a dry run's counts; running: the record as a run starts (POST answers with it); finished: the run's totals. */
  status: "preview" | "running" | "finished" | "stopped";
  policy: RetentionPolicy;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number;
} & RetentionCounts;

export type RunOptions = {
  dryRun?: boolean;
  trigger: "schedule" | "manual";
  actor: string;
  /** Rows per batch (tests use small ones to prove the batching). */
  batch?: number;
  /** Stops between batches (the worker's shutdown); what committed stays counted. */
  signal?: AbortSignal;
  /** The daily run: skipped (null) when a scheduled run started less than this long ago, checked under the lock so two schedulers run once. */
  unlessRanWithinMs?: number;
  /** A deliveries month is emptied whole from this many finished rows on (lib/retention/partitions.ts, COMPACT_FROM); tests use 1. */
  compactFrom?: number;
};

const STOPPED = "stopped before it finished: its process was shutting down; what it removed is counted, and the next run removes the rest";

/** Starts a person's run that a stopping server can stop between batches (lib/retention/running.ts); the route's entry point. */
export async function beginTrackedRetention(pool: pg.Pool, prisma: PrismaClient, opts: Omit<RunOptions, "signal">) {
  const abort = new AbortController();
  const started = await beginRetention(pool, prisma, { ...opts, signal: abort.signal });
  if (started) trackRun(abort, started.done);
  return started;
}

/** One batch in its own transaction, run again when it loses a deadlock (nothing of it committed). */
function inTx<T>(client: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
  return retryTransaction(() => inTransaction(client, fn));
}

/**
 * Runs retention once (or, with dryRun, counts what it would do). Returns null
 * when a scheduled run finds another runner holding the lock; a manual run is
 * refused with a 409 instead.
 */
export async function runRetention(pool: pg.Pool, prisma: PrismaClient | null, opts: RunOptions): Promise<RetentionReport | null> {
  if (opts.dryRun) return previewRun(pool, opts);
  const started = await beginRetention(pool, prisma, opts);
  return started ? started.done : null;
}

async function previewRun(pool: pg.Pool, opts: RunOptions): Promise<RetentionReport> {
  const t0 = Date.now();
  const started = new Date();
  const policy = await currentPolicy(pool);
  const c = await preview(pool, policy);
  return {
    id: null,
    dryRun: true,
    trigger: opts.trigger,
    by: opts.actor,
    status: "preview",
    policy,
    startedAt: started.toISOString(),
    finishedAt: null,
    durationMs: Date.now() - t0,
    ...c,
  };
}

/**
 * Starts a run: takes the lock and writes the run's record (status
 * `running`), then returns that record at once with `done`, the rest of the
 * run, which holds the lock until it ends. The API answers a person with the
 * record (202) while the run goes on (its record's counts grow batch by batch);
 * a run over a large ledger outlasts any request. Null when a scheduled run is
 * not due or another runner holds the lock; a manual one is a 409 then.
 */
async function beginRetention(pool: pg.Pool, prisma: PrismaClient | null, opts: RunOptions): Promise<{ run: RetentionReport; done: Promise<RetentionReport> } | null> {
  const t0 = Date.now();
  const policy = await currentPolicy(pool);
  const client = await connectGuarded(pool);
  let locked = false;
  let handedOff = false;
  const release = async () => {
    if (locked) await client.query("SELECT pg_advisory_unlock($1)", [RETENTION_LOCK]).catch(() => {});
    releaseGuarded(client);
  };
  try {
    const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [RETENTION_LOCK]);
    locked = rows[0].ok;
    if (!prisma && opts.trigger === "manual") throw new Error("a manual retention run writes an audit row: pass a Prisma client");
    if (!locked) {
      if (opts.trigger === "schedule") return null;
      throw new AppError("conflict", "A retention run is already running (the daily run or another operator's); wait for it to finish and look at its record.");
    }
    if (opts.unlessRanWithinMs !== undefined) {
      const last = await lastScheduledRunAt(client);
      if (last && Date.now() - new Date(last).getTime() < opts.unlessRanWithinMs) return null;
    }
    await failAbandonedRuns(client);
    // Fold attempts into the per-minute and hourly stats first: an attempt is only removed once counted there.
    await rollupAttemptStats(pool, { maxChunks: 10_000 }).catch((err) => logger.warn({ err }, "retention: attempt stats rollup failed; unrolled attempts are kept"));
    const id = `rr_${randomBytes(8).toString("hex")}`;
    await insertRetentionRun(client, { id, trigger: opts.trigger, actor: opts.actor, policy });
    const run: RetentionReport = {
      id,
      dryRun: false,
      trigger: opts.trigger,
      by: opts.actor,
      status: "running",
      policy,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      durationMs: Date.now() - t0,
      ...ZERO_COUNTS,
    };
    handedOff = true;
    const done = finishRun(client, pool, prisma, policy, id, opts, t0).finally(release);
    return { run, done };
  } finally {
    if (!handedOff) await release();
  }
}

/** The run after its record is written: the work, then its record finished (and, for a person's run, its audit row). */
async function finishRun(
  client: pg.PoolClient,
  pool: pg.Pool,
  prisma: PrismaClient | null,
  policy: RetentionPolicy,
  id: string,
  opts: RunOptions,
  t0: number,
): Promise<RetentionReport> {
  let total: RetentionCounts = { ...ZERO_COUNTS };
  const add = (c: Partial<RetentionCounts>) => {
    total = {
      deliveries: total.deliveries + (c.deliveries ?? 0),
      attempts: total.attempts + (c.attempts ?? 0),
      events: total.events + (c.events ?? 0),
      expunged: total.expunged + (c.expunged ?? 0),
      partitions: total.partitions + (c.partitions ?? 0),
    };
  };
  try {
    await work(client, pool, policy, id, opts, add);
  } catch (err) {
    await finishRetentionRun(client, id, (err as Error).message).catch(() => {});
    throw err;
  }
  // Stopped between batches (its process shutting down): recorded as failed with why, never as finished, and
  // counting what committed; the next run removes the rest.
  const stopped = opts.signal?.aborted === true;
  const error = stopped ? STOPPED : null;
  // A person's run: its record and its audit row in one transaction. The daily run's record is its trace.
  const done = !prisma
    ? await finishRetentionRun(client, id, error)
    : await prisma.$transaction(async (tx) => {
        const row = await finishRetentionRun(tx, id, error);
        if (opts.trigger === "manual")
          await writeAudit(tx, {
            actor: opts.actor,
            action: "retention.run",
            targetType: "retention",
            targetId: id,
            details: { retentionDays: policy.retentionDays, payloadRetentionDays: policy.payloadRetentionDays, ...total, ...(stopped ? { stopped: true } : {}) },
          });
        return row;
      });
  return {
    id,
    dryRun: false,
    trigger: opts.trigger,
    by: opts.actor,
    status: stopped ? "stopped" : "finished",
    policy,
    startedAt: done.startedAt,
    finishedAt: done.finishedAt,
    durationMs: Date.now() - t0,
    ...total,
  };
}

/** The run's steps: expired deliveries by whole months and then in bounded batches, then whole months of attempts and events, then the other months' events, then payloads. */
async function work(
  client: pg.PoolClient,
  pool: pg.Pool,
  policy: RetentionPolicy,
  id: string,
  opts: RunOptions,
  add: (c: Partial<RetentionCounts>) => void,
): Promise<void> {
  const batch = opts.batch ?? RETENTION_BATCH;
  const stop = () => opts.signal?.aborted === true;
  const days = recordDays(policy);

  // Whole months where they can go (lib/retention/partitions.ts): a swap keeps what is still needed.
  const wholeMonths = async (table: MonthTable) => {
    if (stop()) return;
    const t = Date.now();
    const d = await swapExpiredMonths(pool, table, days, { compactFrom: opts.compactFrom });
    logger.info({ run: id, table, ...d, ms: Date.now() - t }, "retention: months swapped");
    if (d.partitions === 0 && d.deliveries === 0 && d.attempts === 0 && d.events === 0) return;
    const c = { partitions: d.partitions, deliveries: d.deliveries, attempts: d.attempts, events: d.events };
    add(c);
    await addRetentionCounts(client, id, c);
  };

  // The expired deliveries first: whole months of them (a delivery lives in its event's month), then the
  // rest in batches; their attempts in the months swapped next are left to the swap.
  await wholeMonths("deliveries");
  const swapped = await swappedSpan(pool, "attempts", days);
  const t = Date.now();
  let removed = 0;
  let after: Keyset = KEYSET_START;
  for (;;) {
    if (stop()) return;
    const b = await inTx(client, async () => {
      const r = await removeExpiredDeliveries(client, days, after, batch, swapped);
      await addRetentionCounts(client, id, { deliveries: r.deliveries, attempts: r.attempts });
      return r;
    });
    add({ deliveries: b.deliveries, attempts: b.attempts });
    removed += b.deliveries;
    if (b.scanned === 0) break;
    after = b.next;
  }
  logger.info({ run: id, deliveries: removed, ms: Date.now() - t }, "retention: expired deliveries removed");

  await wholeMonths("attempts");
  // The events months this run swaps have just had every event judged (after every expired delivery went):
  // the walk reads the events before and after them.
  const eventMonths = await swappedSpan(pool, "events", days);
  await wholeMonths("events");

  const tenants = await listEventTenants(pool);
  const te = Date.now();
  let events = 0;
  const ranges: { from: Keyset; before: Date | null }[] = eventMonths
    ? [
        { from: KEYSET_START, before: eventMonths.from },
        { from: { at: eventMonths.to.toISOString(), id: "" }, before: null },
      ]
    : [{ from: KEYSET_START, before: null }];
  for (const tenant of tenants) {
    for (const range of ranges) {
      let at = range.from;
      for (;;) {
        if (stop()) return;
        const b = await inTx(client, async () => {
          const r = await removeExpiredEvents(client, tenant, daysFor(policy, tenant), at, batch, range.before);
          await addRetentionCounts(client, id, { events: r.events });
          return r;
        });
        add({ events: b.events });
        events += b.events;
        // A short batch is the range's last.
        if (b.scanned < batch) break;
        at = b.next;
      }
    }
  }
  logger.info({ run: id, events, tenants: tenants.length, ms: Date.now() - te }, "retention: expired events removed");

  const tx = Date.now();
  let expunged = 0;
  for (const tenant of tenants) {
    const pd = payloadDaysFor(policy, tenant);
    if (pd === null) continue;
    let at: Keyset = KEYSET_START;
    for (;;) {
      if (stop()) return;
      const b = await inTx(client, async () => {
        const r = await expungeEvents(client, tenant, pd, at, batch);
        await addRetentionCounts(client, id, { expunged: r.expunged });
        return r;
      });
      add({ expunged: b.expunged });
      expunged += b.expunged;
      if (b.scanned === 0) break;
      at = b.next;
    }
  }
  logger.info({ run: id, expunged, ms: Date.now() - tx }, "retention: payloads expunged");
}

/** What a run would remove and expunge now, changing nothing. */
async function preview(pool: pg.Pool, policy: RetentionPolicy): Promise<RetentionCounts> {
  const days = recordDays(policy);
  const d = await countExpiredDeliveries(pool, days);
  const events = await countExpiredEvents(pool, days);
  let expunged = 0;
  for (const tenant of await listEventTenants(pool)) {
    const pd = payloadDaysFor(policy, tenant);
    if (pd !== null) expunged += await countExpungeable(pool, tenant, pd, { p: days, days: daysFor(policy, tenant) });
  }
  return { deliveries: d.deliveries, attempts: d.attempts, events, expunged, partitions: 0 };
}

export type RetentionOverview = {
  policy: RetentionPolicy;
  /** The oldest row kept in each ledger table (null: the table is empty). */
  oldest: OldestKept;
  /** The last runs, newest first (dry runs are not recorded). */
  runs: RetentionRunRow[];
  /** The ledger tables' sizes; with monthly partitions, each partition's too. */
  tables: TableSize[];
  partitions: PartitionSize[];
};

/** What GET /api/v1/retention and the admin page's Retention section show. */
export async function getRetentionOverview(pool: pg.Pool): Promise<RetentionOverview> {
  const [policy, oldest, runs, tables, partitions] = await Promise.all([
    currentPolicy(pool),
    findOldestKept(pool),
    listRetentionRuns(pool, 10),
    findLedgerTableSizes(pool),
    listPartitionSizes(pool),
  ]);
  return { policy, oldest, runs, tables, partitions };
}

/**
 * Sets (or, with retentionDays null, removes) a tenant's override, audited
 * `retention.policy` in the same transaction. An unknown tenant or days out of
 * range are a 400 before anything is written.
 */
export async function setRetentionOverride(prisma: PrismaClient, input: TRetentionOverride, principal: Principal): Promise<RetentionPolicy> {
  const parsed = ZRetentionOverride.safeParse(input);
  if (!parsed.success) throw fromZod(parsed.error);
  const v = parsed.data;
  if (!(await retentionTenantExists(ledgerDb(), v.tenant)))
    throw new AppError("bad_request", `tenant ${JSON.stringify(v.tenant)} is unknown: no tenant, subscription or event has that id. Check the spelling.`);
  const after = v.retentionDays === null ? null : { retentionDays: v.retentionDays, payloadRetentionDays: v.payloadRetentionDays };
  await prisma.$transaction(async (tx) => {
    const before = await putOverride(tx, v.tenant, after, principal.actor);
    await writeAudit(tx, {
      actor: principal.actor,
      action: "retention.policy",
      targetType: "retention",
      targetId: v.tenant,
      tenantId: v.tenant,
      details: { before, after },
    });
  });
  return currentPolicy(ledgerDb());
}
