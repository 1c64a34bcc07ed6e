// Month partitions of `events` and `attempts` (migration 0021_partitions) and
// of `deliveries` (by their event's month, migration 0029):
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
import { withTransaction } from "../../db/client";
import { execute, raw, queryRows, sql, type Sql } from "../read/db";
import { withFrozenMonth } from "./freeze";

const PARTITIONED_TABLES = ["events", "attempts", "deliveries"] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The advisory lock every partition change takes ("hlpart" in ASCII), the same as hl_ensure_partition's. */
const PARTITION_LOCK = "x'686c70617274'::bigint";

/** Months created ahead of the current one. Two: a missed hourly run, or a month's turn during a long outage, still finds its partition. */
const MONTHS_AHEAD = 2;

/**
 * How long a partition change waits for its table lock before giving up (and
 * retrying at the next run). An ALTER waiting for a lock makes every later
 * statement on that table queue behind it, so the wait is what the worker and
 * the ingest would stall; half a second keeps them well under a second.
 */
const PARTITION_LOCK_TIMEOUT_MS = 500;

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

/** Every partition of the partitioned tables, by table then lower bound (the default partition last). */
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
 * Creates the month partitions of every partitioned table from `from`'s month (default:
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
      const made = await withLockTimeout(pool, opts.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS, async (c) => {
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
 * The partition `name` of one of `tables`, if it is a whole month that has
 * ended by `now`: never a default partition, never the current month.
 * Deliveries months are only ever emptied in place (compactPartition), never
 * swapped: see there.
 */
async function endedMonth(db: Db, name: string, tables: PartitionedTable[], now = new Date()): Promise<PartitionInfo & { from: Date; to: Date }> {
  const p = (await listPartitions(db)).find((x) => x.name === name);
  if (!p || !tables.includes(p.table)) throw new PartitionDropRefused(`${name} is not a partition of ${tables.join(" or ")}`);
  if (p.isDefault || !p.from || !p.to) throw new PartitionDropRefused(`${name} is a default partition; it is never removed`);
  if (p.to.getTime() > now.getTime()) throw new PartitionDropRefused(`${name} holds a month that has not ended (until ${p.to.toISOString()})`);
  return { ...p, from: p.from, to: p.to };
}

/** swapped: false when the month held nothing to remove and was left as it was. */
export type SwapResult = { table: PartitionedTable; removed: number; kept: number; swapped: boolean };

/**
 * Removes one whole past month but the rows `keep` names, without deleting
 * row by row: the kept rows are copied into a new table built like the
 * month (its indexes and a CHECK of the bounds made before it is attached),
 * then in one short step the old month is detached, the copy attached in its
 * place and the old month dropped. `beforeSwap` runs after the copy, in the
 * same transaction (an events month removes its dropped events' keys there).
 *
 * Locks: the old month is locked SHARE from before the copy to the commit, so
 * nothing can change in it unseen (its rows are read, not written, meanwhile);
 * the parent's ACCESS EXCLUSIVE is taken only by the DETACH, after the copy,
 * and held for the catalog changes that follow (milliseconds). Each lock is
 * waited for at most `lockTimeoutMs`; the DETACH is tried a few times from a
 * savepoint, then the swap gives up with nothing changed (55P03). With no row
 * kept, the month is simply detached and dropped.
 */
export async function swapPartition(
  pool: pg.Pool,
  name: string,
  /** A condition over the old month's rows (alias `o`) naming those it keeps. */
  keep: Sql,
  opts: { now?: Date; lockTimeoutMs?: number; beforeSwap?: (c: pg.PoolClient, copy: string) => Promise<void>; detachTries?: number } = {},
): Promise<SwapResult> {
  const p = await endedMonth(pool, name, ["events", "attempts"], opts.now);
  const [from, to] = [p.from, p.to];
  const copy = `${name}_keep`;
  if (copy.length > 63) throw new PartitionDropRefused(`${name}: name too long for its copy`);
  const swap = withLockTimeout(pool, opts.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS, async (c): Promise<SwapResult> => {
    await c.query(`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
    await c.query(`LOCK TABLE ${ident(name)} IN SHARE MODE`);
    // The copy and its checks read the whole month: no statement timeout (the lock timeout still holds).
    await c.query("SET LOCAL statement_timeout = 0");
    await c.query("SET LOCAL work_mem = '256MB'");
    const { rows: total } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${ident(name)}`);
    // A month swapped before holds only kept rows until something in it expires: the daily run finds that by
    // reading it, not by copying it whole and undoing the copy.
    const [gone] = await queryRows<{ any: boolean }>(c, sql`SELECT EXISTS (SELECT 1 FROM ${raw(ident(name))} o WHERE NOT ${keep}) AS any`);
    if (total[0].n > 0 && !gone.any) throw new NothingToRemove(total[0].n);
    await c.query(`DROP TABLE IF EXISTS ${ident(copy)}`);
    await c.query(`CREATE TABLE ${ident(copy)} (LIKE ${ident(name)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`);
    const kept = await execute(c, sql`INSERT INTO ${raw(ident(copy))} SELECT * FROM ${raw(ident(name))} o WHERE ${keep}`);
    if (opts.beforeSwap) await opts.beforeSwap(c, copy);
    if (p.table === "events") {
      // Every event id the month keeps has its key, and no other id of the month does: else a key would outlive its event.
      const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM event_keys WHERE created_at >= $1 AND created_at < $2", [from, to]);
      if (rows[0].n !== kept)
        throw new PartitionDropRefused(`${name}: ${rows[0].n - kept} ids of events it drops are still in event_keys; remove them (and their deliveries) first`);
    }
    const detach = async () => {
      for (let i = 0; ; i++) {
        await c.query("SAVEPOINT hl_detach");
        try {
          await c.query(`ALTER TABLE ${ident(p.table)} DETACH PARTITION ${ident(name)}`);
          return;
        } catch (err) {
          await c.query("ROLLBACK TO SAVEPOINT hl_detach");
          if ((err as { code?: string }).code !== "55P03" || i + 1 >= (opts.detachTries ?? 5)) throw err;
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
        }
      }
    };
    if (kept === 0) {
      await c.query(`DROP TABLE ${ident(copy)}`);
      await detach();
      await c.query(`DROP TABLE ${ident(name)}`);
      return { table: p.table, removed: total[0].n, kept: 0, swapped: true };
    }
    // The month's indexes (its primary key as a constraint, which ATTACH looks for), built on the
    // few kept rows now, so the attach below finds them and builds nothing under the parent's lock;
    // renamed to the old month's names once it is gone.
    const { rows: idx } = await c.query<{ name: string; def: string; pkey: string | null }>(
      `SELECT x.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
              (SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype = 'p') AS pkey
         FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid WHERE i.indrelid = $1::regclass ORDER BY x.relname`,
      [name],
    );
    const renames: [string, string][] = [];
    for (const [n, r] of idx.entries()) {
      const tmp = `${copy}_${n}`;
      if (r.pkey) await c.query(`ALTER TABLE ${ident(copy)} ADD CONSTRAINT ${ident(tmp)} ${r.pkey}`);
      else await c.query(r.def.replace(/^CREATE (UNIQUE )?INDEX \S+ ON \S+ /, (_m, u: string | undefined) => `CREATE ${u ?? ""}INDEX ${ident(tmp)} ON ${ident(copy)} `));
      renames.push([tmp, r.name]);
    }
    const bound = `${copy}_bounds`;
    const range = `'${from.toISOString()}'`;
    const until = `'${to.toISOString()}'`;
    await c.query(`ALTER TABLE ${ident(copy)} ADD CONSTRAINT ${ident(bound)} CHECK (created_at >= ${range} AND created_at < ${until})`);
    await detach();
    await c.query(`ALTER TABLE ${ident(p.table)} ATTACH PARTITION ${ident(copy)} FOR VALUES FROM (${range}) TO (${until})`);
    await c.query(`DROP TABLE ${ident(name)}`);
    await c.query(`ALTER TABLE ${ident(copy)} RENAME TO ${ident(name)}`);
    await c.query(`ALTER TABLE ${ident(name)} DROP CONSTRAINT ${ident(bound)}`);
    for (const [tmp, was] of renames) await c.query(`ALTER INDEX ${ident(tmp)} RENAME TO ${ident(was)}`);
    return { table: p.table, removed: total[0].n - kept, kept, swapped: true };
  });
  return swap.catch((err: unknown) => {
    if (err instanceof NothingToRemove) return { table: p.table, removed: 0, kept: err.rows, swapped: false };
    throw err;
  });
}

/**
 * Removes from one past month of deliveries every row but those `keptRows`
 * returns, in place: the kept rows are set aside, the month is truncated and
 * they are written back (the month's indexes take them as they come). Unlike
 * swapPartition it takes no lock on the parent table. The worker's statements
 * lock the parent and then, as they are planned, every month; a swap waiting
 * for the parent's lock to detach a month that the worker waits for would be
 * a deadlock, and was (the 1 M bench). Here only the month is locked, ACCESS
 * EXCLUSIVE from the first read to the commit, with the month frozen
 * (./freeze.ts) so that the workers' statements leave it out and do not wait
 * for that lock. The lock is taken at once, not raised
 * from a weaker mode later, since a statement that read the month under the
 * weaker lock and then waits to lock rows in it would hold what the raise
 * waits for (a deadlock, seen with EXCLUSIVE then TRUNCATE). A row locked FOR
 * UPDATE elsewhere makes the compaction give up after the lock timeout
 * rather than judge a row about to change. `settle` runs with the kept rows in the temporary
 * table `kept` before the truncate, and returns how many rows go (what the
 * month's delete triggers would have seen: a truncate fires none).
 * `anyGone` tells whether anything would go (read before the lock); when
 * not, nothing is changed.
 * A month with nothing to keep stays, empty.
 */
export async function compactPartition(
  pool: pg.Pool,
  name: string,
  q: { anyGone: Sql; keptRows: Sql; settle: (c: pg.PoolClient) => Promise<number> },
  opts: {
    now?: Date;
    lockTimeoutMs?: number;
    ackTimeoutMs?: number;
    log?: Logger;
    /** Runs in the transaction, after the lock (tests hold the lock with it). */ locked?: (c: pg.PoolClient) => Promise<void>;
  } = {},
): Promise<SwapResult> {
  const p = await endedMonth(pool, name, ["deliveries"], opts.now);
  // Before the lock, so the worker does not wait for them: whether anything would go (a month with nothing to remove is
  // left alone), and one read of the kept rows, which brings their pages into memory for the read under the lock.
  const [gone] = await queryRows<{ any: boolean }>(pool, sql`SELECT EXISTS (${q.anyGone}) AS any`);
  if (!gone.any) return { table: p.table, removed: 0, kept: -1, swapped: false };
  await queryRows(pool, sql`SELECT count(*) FROM (${q.keptRows}) k`);
  // Frozen (./freeze.ts): the workers leave the month out of their statements while it is locked, so they do not wait.
  return withFrozenMonth(
    pool,
    { name, quoted: ident(name), from: p.from, to: p.to },
    () =>
      withLockTimeout(pool, opts.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS, async (c): Promise<SwapResult> => {
        await c.query(`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
        await c.query(`LOCK TABLE ${ident(name)} IN ACCESS EXCLUSIVE MODE`);
        if (opts.locked) await opts.locked(c);
        await c.query("SET LOCAL statement_timeout = 0");
        await c.query("SET LOCAL work_mem = '256MB'");
        const kept = await execute(c, sql`CREATE TEMPORARY TABLE kept ON COMMIT DROP AS ${q.keptRows}`);
        const removed = await q.settle(c);
        await c.query(`TRUNCATE ${ident(name)}`);
        await c.query(`INSERT INTO ${ident(name)} SELECT * FROM kept`);
        return { table: p.table, removed, kept, swapped: true };
      }),
    { ackTimeoutMs: opts.ackTimeoutMs, log: opts.log },
  );
}

/** Thrown to undo a swap's transaction when every one of the month's `rows` is kept. */
class NothingToRemove extends Error {
  constructor(readonly rows: number) {
    super("nothing to remove");
  }
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

/** A partition's (or its copy's) name quoted for SQL, refused unless it is a plain lower-case identifier. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new PartitionDropRefused(`not a partition name: ${name}`);
  return `"${name}"`;
}

/** A transaction whose lock waits give up after lockTimeoutMs (SET LOCAL: the setting ends with it). */
function withLockTimeout<T>(pool: pg.Pool, lockTimeoutMs: number, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (c) => {
    await c.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    return fn(c);
  });
}
