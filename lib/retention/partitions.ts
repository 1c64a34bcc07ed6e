// Whole-month removal (docs/DESIGN.md, Retention): events and attempts are
// range-partitioned by month on created_at (migration 0021,
// lib/ledger/sql/partitions.ts), deliveries by their event's month (0029).
// A deliveries month is emptied in place (compactPartition) the first time it
// expires; for events and attempts, a month that ended before every tenant's
// cutoff is swapped (swapPartition): the rows still needed (a dead letter's
// attempts, an event a delivery still names) are copied into a new month
// table that replaces the old one, which is dropped with everything else in
// it. A month the swap cannot take (its lock not granted in time) is left as
// it is and taken by the next run; nothing in it is lost meanwhile, and the
// attempts of deliveries removed meanwhile are never read (no delivery names
// them).
//
// Order in a run: the expired deliveries first, by whole months and then in
// batches (their attempts in the months about to be swapped are left to the
// swap), then the attempts months (keeping the attempts whose delivery is
// still there), then the events months (keeping the events a delivery or a
// running batch still names, and those their tenant's days keep), then the
// events of the months not swapped, in batches.
import "server-only";
import type pg from "pg";
import { compactPartition, listPartitions, PartitionDropRefused, swapPartition, type PartitionInfo } from "../ledger/sql/partitions";
import {
  attemptKept,
  countFinishedIn,
  deliveryGoneIn,
  deliveryKeptRows,
  eventKept,
  removeDroppedEventKeys,
  removeOrphanedDefaultAttempts,
  settleDroppedDeliveries,
  type SwappedSpan,
  type TenantDays,
} from "../ledger/sql/retention";
import { logger } from "../log";

/** rows: the planner's estimate, null until the partition is first analysed. */
export type PartitionSize = { table: string; name: string; from: string | null; to: string | null; rows: number | null; bytes: number };

/** The ledger tables' month partitions with their bounds and sizes (the default partitions included). */
export async function listPartitionSizes(pool: pg.Pool): Promise<PartitionSize[]> {
  return (await listPartitions(pool)).map((p) => ({
    table: p.table,
    name: p.name,
    from: p.from ? new Date(p.from).toISOString() : null,
    to: p.to ? new Date(p.to).toISOString() : null,
    rows: p.rowsEstimate >= 0 ? Math.round(p.rowsEstimate) : null,
    bytes: p.bytes,
  }));
}

/** Ended months of `table` that ended before every tenant's cutoff: the months a run swaps. */
async function candidates(pool: pg.Pool, table: MonthTable, days: TenantDays): Promise<PartitionInfo[]> {
  const shortest = Math.min(days.defaultDays, ...days.overrides.map((o) => o.days));
  const latestCutoff = Date.now() - shortest * 86_400_000;
  return (await listPartitions(pool)).filter((p) => p.table === table && !p.isDefault && p.to && new Date(p.to).getTime() <= latestCutoff);
}

/**
 * The span of the months of `table` a run swaps ([first from, last to)), null
 * when none: the row-by-row walks leave their rows to the swap (attempts) or
 * to the swap just made (events). A month whose swap fails is then left
 * whole, for the next run.
 */
export async function swappedSpan(pool: pg.Pool, table: "attempts" | "events", days: TenantDays): Promise<SwappedSpan> {
  const months = await candidates(pool, table, days);
  if (months.length === 0) return null;
  return { from: new Date(Math.min(...months.map((m) => m.from!.getTime()))), to: new Date(Math.max(...months.map((m) => m.to!.getTime()))) };
}

export type MonthTable = "deliveries" | "events" | "attempts";

/**
 * A deliveries month is emptied whole (compactPartition, which locks it; the
 * workers leave it out meanwhile, but the dashboard's reads of every month
 * wait for it) only while it holds at least this many finished rows: the
 * first time its month expires.
 * Afterwards it holds its kept rows, and what expires among them later is
 * removed row by row.
 */
const COMPACT_FROM = 10_000;
export type Swapped = { partitions: number; deliveries: number; attempts: number; events: number };

/**
 * Swaps every candidate month of `table`, keeping the rows still needed;
 * returns how many months were swapped and how many rows went. A month whose
 * lock is not granted in time, or whose swap is refused, is left for the next
 * run (logged); for attempts, so is the default partition's sweep.
 */
export async function swapExpiredMonths(pool: pg.Pool, table: MonthTable, days: TenantDays, opts: { compactFrom?: number } = {}): Promise<Swapped> {
  const out: Swapped = { partitions: 0, deliveries: 0, attempts: 0, events: 0 };
  const compactFrom = opts.compactFrom ?? COMPACT_FROM;
  for (const p of await candidates(pool, table, days)) {
    const month = { from: p.from!, to: p.to! };
    // A deliveries month emptied before holds few finished rows: the few that expire later go row by row
    // (removeExpiredDeliveries), without locking the month again.
    if (table === "deliveries" && (await countFinishedIn(pool, p.name, compactFrom)) < compactFrom) continue;
    try {
      const r =
        table === "deliveries"
          ? await compactPartition(
              pool,
              p.name,
              {
                anyGone: deliveryGoneIn(days, p.name),
                keptRows: deliveryKeptRows(days, p.name),
                settle: (c) => settleDroppedDeliveries(c, p.name),
              },
              { log: logger },
            )
          : table === "attempts"
            ? await swapPartition(pool, p.name, attemptKept(month.to))
            : await swapPartition(pool, p.name, eventKept(days, month), {
                beforeSwap: (c, copy) => removeDroppedEventKeys(c, month.from, month.to, copy).then(() => {}),
              });
      if (!r.swapped) continue;
      // The emptied month's statistics, so the attempts and events swaps that follow (which read its kept rows as one set) plan on them.
      if (table === "deliveries") await pool.query(`ANALYZE "${p.name}"`);
      out.partitions++;
      out[table] += r.removed;
    } catch (err) {
      // Refused (a delivery or a running batch names an event it drops), its lock not granted in time (55P03), lost to a
      // deadlock with the worker's writes (40P01), or a key a batch item written meanwhile still names (23503).
      if (err instanceof PartitionDropRefused || ["55P03", "40P01", "23503"].includes((err as { code?: string }).code ?? ""))
        logger.warn({ partition: p.name, err: (err as Error).message }, "retention: month not swapped; the next run takes it");
      else throw err;
    }
  }
  if (table === "attempts") out.attempts += await removeOrphanedDefaultAttempts(pool);
  return out;
}
