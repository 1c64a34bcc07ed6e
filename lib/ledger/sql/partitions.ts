// Month partitions of `events` and `attempts` (migration 0021_partitions):
// list them with their bounds and sizes, create them ahead of time, and drop
// one whole month (retention). docs/SCALING.md step 1 explains the design.
//
// Creation never happens on the insert path: the worker and the stack's
// supervisor (`hookledger start`) call ensurePartitions when they start and
// every hour (startPartitionMaintenance). A row whose month has no partition
// yet lands in the table's default partition, and hl_ensure_partition moves
// such rows into the month's partition when it creates it.
import "server-only";
import type pg from "pg";
import type { Logger } from "pino";

export const PARTITIONED_TABLES = ["events", "attempts"] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The advisory lock every partition change takes ("hlpart" in ASCII), the same as hl_ensure_partition's. */
const PARTITION_LOCK = "x'686c70617274'::bigint";

/** Months created ahead of the current one. Two: a missed hourly run, or a month's turn during a long outage, still finds its partition. */
export const MONTHS_AHEAD = 2;

/**
 * How long a partition change waits for its table lock before giving up (and
 * retrying at the next run). An ALTER waiting for a lock makes every later
 * statement on that table queue behind it, so the wait is what the worker and
 * the ingest would stall; half a second keeps them well under a second.
 */
export const PARTITION_LOCK_TIMEOUT_MS = 500;

export type PartitionInfo = {
  table: PartitionedTable;
  name: string;
  /** Inclusive lower bound; null for the default partition. */
  from: Date | null;
  /** Exclusive upper bound; null for the default partition. */
  to: Date | null;
  isDefault: boolean;
  /** Table, indexes and TOAST. */
  bytes: number;
  /** The planner's row estimate (pg_class.reltuples; -1 until first analysed). */
  rowsEstimate: number;
};

type Db = pg.Pool | pg.PoolClient;

/** Every partition of events and attempts, by table then lower bound (the default partition last). */
export async function listPartitions(db: Db): Promise<PartitionInfo[]> {
  const { rows } = await db.query<{ table: PartitionedTable; name: string; from: Date | null; to: Date | null; is_default: boolean; bytes: string; rows: number }>(
    `SELECT p.relname AS table, c.relname AS name,
            (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS from,
            (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS to,
            pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' AS is_default,
            pg_total_relation_size(c.oid)::text AS bytes, c.reltuples::float8 AS rows
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = ANY ($1::text[]) AND p.relnamespace = current_schema()::regnamespace
      ORDER BY p.relname, 3 NULLS LAST`,
    [PARTITIONED_TABLES],
  );
  return rows.map((r) => ({
    table: r.table,
    name: r.name,
    from: r.from,
    to: r.to,
    isDefault: r.is_default,
    bytes: Number(r.bytes),
    rowsEstimate: r.rows,
  }));
}

/** The first instant (UTC) of the month holding `at`, moved by `months`. */
export function monthStart(at: Date, months = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}

/**
 * Creates the month partitions of both tables from `from`'s month (default:
 * the current month) through `ahead` months after `now`'s, those missing only.
 * Idempotent and safe beside other processes doing the same (one advisory
 * lock; each month in its own short transaction with a lock timeout). Returns
 * the names created. Needs a pool (it runs transactions).
 */
export async function ensurePartitions(pool: pg.Pool, opts: { now?: Date; from?: Date; ahead?: number; lockTimeoutMs?: number } = {}): Promise<string[]> {
  const now = opts.now ?? new Date();
  const last = monthStart(now, opts.ahead ?? MONTHS_AHEAD);
  const created: string[] = [];
  const existing = new Set((await listPartitions(pool)).map((p) => p.name));
  for (let m = monthStart(opts.from ?? now); m <= last; m = monthStart(m, 1)) {
    for (const table of PARTITIONED_TABLES) {
      const name = partitionName(table, m);
      if (existing.has(name)) continue;
      const made = await inTransaction(pool, opts.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS, async (c) => {
        const { rows } = await c.query<{ made: boolean }>("SELECT hl_ensure_partition($1, $2) AS made", [table, m]);
        return rows[0].made;
      });
      if (made) created.push(name);
    }
  }
  return created;
}

/** events_p2026_12 for events in December 2026 (UTC). */
export function partitionName(table: PartitionedTable, at: Date): string {
  const m = monthStart(at);
  return `${table}_p${m.getUTCFullYear()}_${String(m.getUTCMonth() + 1).padStart(2, "0")}`;
}

export class PartitionDropRefused extends Error {}

/**
 * Detaches and drops one whole month partition (`name` as listPartitions
 * gives it). Refused (PartitionDropRefused, nothing changed) for a default
 * partition, a name that is not a partition of events or attempts, a month
 * that has not ended yet, and an events month whose event ids are still in
 * event_keys: the caller removes those keys first, and the foreign key from
 * deliveries to event_keys makes that impossible while any delivery still
 * names one of the month's events, so no delivery can lose its event. The
 * DETACH takes ACCESS EXCLUSIVE on the parent for milliseconds (a catalog
 * change); it waits at most `lockTimeoutMs` for it and then fails (retry
 * later) rather than queue the worker's and the ingest's writes behind it.
 * Returns the rows the partition held.
 */
export async function dropPartition(pool: pg.Pool, name: string, opts: { now?: Date; lockTimeoutMs?: number } = {}): Promise<{ table: PartitionedTable; rows: number }> {
  const now = opts.now ?? new Date();
  const p = (await listPartitions(pool)).find((x) => x.name === name);
  if (!p) throw new PartitionDropRefused(`${name} is not a partition of ${PARTITIONED_TABLES.join(" or ")}`);
  if (p.isDefault || !p.from || !p.to) throw new PartitionDropRefused(`${name} is a default partition; it is never dropped`);
  if (p.to.getTime() > now.getTime()) throw new PartitionDropRefused(`${name} holds a month that has not ended (until ${p.to.toISOString()})`);
  return inTransaction(pool, opts.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS, async (c) => {
    await c.query(`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
    if (p.table === "events") {
      const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM event_keys WHERE created_at >= $1 AND created_at < $2", [p.from, p.to]);
      if (rows[0].n > 0) throw new PartitionDropRefused(`${name}: ${rows[0].n} of its event ids are still in event_keys; remove them (and their deliveries) first`);
    }
    const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${ident(name)}`);
    await c.query(`ALTER TABLE ${ident(p.table)} DETACH PARTITION ${ident(name)}`);
    await c.query(`DROP TABLE ${ident(name)}`);
    return { table: p.table, rows: rows[0].n };
  });
}

/**
 * Runs ensurePartitions now and every `intervalMs` (default one hour) until
 * stopped. A failed run (a lock not granted in time, the database away) is
 * logged and tried again at the next one; months are created two ahead, so a
 * few failed runs change nothing.
 */
export function startPartitionMaintenance(pool: pg.Pool, opts: { intervalMs?: number; log?: Logger } = {}): { stop: () => Promise<void>; run: () => Promise<string[]> } {
  const interval = opts.intervalMs ?? 60 * 60 * 1000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<string[]> = Promise.resolve([]);
  const run = () => {
    running = ensurePartitions(pool).then(
      (created) => {
        if (created.length > 0) opts.log?.info({ created }, "partitions created");
        return created;
      },
      (err: unknown) => {
        opts.log?.warn({ err: (err as Error).message }, "partition maintenance failed; retrying at the next run");
        return [];
      },
    );
    return running;
  };
  const loop = () => {
    if (stopped) return;
    void run().then(() => {
      // unref: the hourly timer never keeps a process alive that is otherwise done.
      if (!stopped) timer = setTimeout(loop, interval).unref();
    });
  };
  loop();
  return {
    run,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new PartitionDropRefused(`not a partition name: ${name}`);
  return `"${name}"`;
}

async function inTransaction<T>(pool: pg.Pool, lockTimeoutMs: number, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    const out = await fn(c);
    await c.query("COMMIT");
    c.release();
    return out;
  } catch (err) {
    await c.query("ROLLBACK").catch(() => {});
    c.release();
    throw err;
  }
}
