// Whole-partition drops (docs/DESIGN.md, Retention): events and attempts are
// range-partitioned by month on created_at (migration 0021,
// lib/ledger/sql/partitions.ts). A month whose every row a run would remove is
// dropped in one catalog change (DETACH, then DROP) instead of deleted row by
// row. What is not droppable whole (a month still holding a dead letter's
// attempts, say) is left to the batched deletes of lib/ledger/sql/retention.ts,
// which are correct on any month, only slower.
//
// Order in a run: attempts months first (their deliveries are then removed in
// batches with nothing left to delete under them), then the deliveries, then
// events months (an event goes only once no delivery names it), then the
// remaining events in batches.
import "server-only";
import type pg from "pg";
import { dropPartition, listPartitions, PartitionDropRefused, type PartitionInfo } from "../ledger/sql/partitions";
import { attemptPartitionExpired, eventPartitionExpired, removeMonthEventKeys, type TenantDays } from "../ledger/sql/retention";
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

/** Ended months of `table` old enough that some tenant's cutoff lies after their end: the only candidates worth checking. */
async function candidates(pool: pg.Pool, table: "events" | "attempts", days: TenantDays): Promise<PartitionInfo[]> {
  const shortest = Math.min(days.defaultDays, ...days.overrides.map((o) => o.days));
  const latestCutoff = Date.now() - shortest * 86_400_000;
  return (await listPartitions(pool)).filter((p) => p.table === table && !p.isDefault && p.to && new Date(p.to).getTime() <= latestCutoff);
}

export type Dropped = { partitions: number; attempts: number; events: number };

/**
 * Drops every candidate month of `table` whose rows have all expired; returns
 * how many months and rows went. A drop that cannot get its lock in time is
 * skipped (the batched deletes cover the month), as is one refused.
 */
export async function dropExpiredPartitions(pool: pg.Pool, table: "events" | "attempts", days: TenantDays): Promise<Dropped> {
  const out: Dropped = { partitions: 0, attempts: 0, events: 0 };
  for (const p of await candidates(pool, table, days)) {
    try {
      const expired = table === "attempts" ? await attemptPartitionExpired(pool, p.name, days) : await eventPartitionExpired(pool, p.name, days);
      if (!expired) continue;
      if (table === "events") while ((await removeMonthEventKeys(pool, p.from!, p.to!)) > 0);
      const r = await dropPartition(pool, p.name);
      out.partitions++;
      out[table] += r.rows;
    } catch (err) {
      // Refused, its lock not granted in time (55P03) or lost to a deadlock with the worker's writes (40P01), a key still named (23503), or the check over the month timed out (57014).
      if (err instanceof PartitionDropRefused || ["55P03", "40P01", "23503", "57014"].includes((err as { code?: string }).code ?? ""))
        logger.warn({ partition: p.name, err: (err as Error).message }, "retention: month not dropped whole; its rows are removed in batches");
      else throw err;
    }
  }
  return out;
}
