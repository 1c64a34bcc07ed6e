// Partition freezes (migration 0030): a deliveries month that retention is
// emptying, left out of the workers' statements so its lock does not stall
// the drain (docs/SCALING.md, "Emptying a deliveries month").
//
// PostgreSQL locks every month of `deliveries` when it plans the claim or the
// result write, since their rows' months are only known as they run. A
// condition naming a month's bounds as constants prunes the month when the
// statement is planned, and the month is then not locked at all
// (test/retention/partition-freeze.test.ts reads pg_locks).
//
// The protocol, for one month:
//   1. retention writes the freeze row and NOTIFYs FREEZE_CHANNEL;
//   2. each worker reloads the freezes, leaves the month out of every cycle
//      from the next one on (claims nothing meanwhile: it cannot count the
//      month's in-flight rows any more), holds results for the month's rows,
//      and acknowledges (worker_heartbeats.freeze_seen) at the top of that
//      cycle, when no statement it planned before is still running;
//   3. once every live worker has acknowledged (or ACK_TIMEOUT_MS passed),
//      retention counts the month's in-flight rows per subscription into the
//      freeze row (constant from then on: no worker touches the month) and
//      NOTIFYs again; the workers claim again, counting those rows as busy;
//   4. retention locks and empties the month, deletes the freeze row and
//      NOTIFYs; the workers write the results they held.
import "server-only";
import type pg from "pg";
import type { Logger } from "pino";

export const FREEZE_CHANNEL = "hookledger_partition_freeze";

/** How long retention waits for every live worker to acknowledge a freeze before it goes on without the laggards. */
const ACK_TIMEOUT_MS = 1_000;

/** A freeze row older than this is ignored by the workers: the retention run that wrote it died. */
const FREEZE_EXPIRES = "2 minutes";

/** A worker whose heartbeat is older than this is not waited for. */
const LIVE_WORKER_SECONDS = 30;

export type Freeze = {
  gen: number;
  partition: string;
  /** The month's bounds (its partition's FROM and TO). */
  lo: Date;
  hi: Date;
  /** The month's in-flight rows per subscription, once counted (step 3); null before. */
  inFlight: Record<string, number> | null;
};

/**
 * A condition (appended to a WHERE) keeping `alias`'s rows out of every
 * frozen month. The bounds are constants, so the planner prunes the months
 * and takes no lock on them. Empty when nothing is frozen.
 */
export function outsideFrozen(alias: string, freezes: readonly Freeze[]): string {
  return freezes.map((f) => ` AND (${alias}.event_at < '${f.lo.toISOString()}' OR ${alias}.event_at >= '${f.hi.toISOString()}')`).join("");
}

/**
 * The frozen months' in-flight rows of subscription `sub` (an SQL expression),
 * which the claim adds to the rows it counts in flight. The counts are
 * inlined as a literal (they are ours: subscription ids and integers).
 */
export function frozenInFlight(sub: string, freezes: readonly Freeze[]): string {
  const counts: Record<string, number> = {};
  for (const f of freezes) for (const [id, n] of Object.entries(f.inFlight ?? {})) counts[id] = (counts[id] ?? 0) + n;
  if (Object.keys(counts).length === 0) return "0";
  return `COALESCE(('${JSON.stringify(counts).replaceAll("'", "''")}'::jsonb ->> ${sub})::int, 0)`;
}

/** Postgres timestamptz text ("2026-06-15 10:11:12.123456+00") as epoch milliseconds. */
function pgTimeMs(text: string): number {
  const m = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?$/.exec(text);
  return m ? Date.parse(`${m[1]}T${m[2]}${m[3]}:${m[4] ?? "00"}`) : Date.parse(text);
}

/** Whether a row of event time `eventAt` (Postgres text) lies in a frozen month. */
export function inFrozen(eventAt: string, freezes: readonly Freeze[]): boolean {
  if (freezes.length === 0) return false;
  const t = pgTimeMs(eventAt);
  return freezes.some((f) => t >= f.lo.getTime() && t < f.hi.getTime());
}

/** The freezes in force (the worker's reload). */
export async function loadFreezes(db: pg.Pool | pg.PoolClient): Promise<Freeze[]> {
  const { rows } = await db.query<{ gen: string; partition: string; lo: Date; hi: Date; in_flight: Record<string, number> | null }>(
    `SELECT gen, "partition", lo, hi, in_flight FROM partition_freezes WHERE expires_at > now() ORDER BY gen`,
  );
  return rows.map((r) => ({ gen: Number(r.gen), partition: r.partition, lo: r.lo, hi: r.hi, inFlight: r.in_flight }));
}

/** Step 2's acknowledgement: the worker leaves out every month frozen up to `gen`. */
export async function ackFreeze(db: pg.Pool, workerId: string, gen: number): Promise<boolean> {
  // No row yet (the first heartbeat has not landed): not acknowledged, asked again next cycle.
  const r = await db.query("UPDATE worker_heartbeats SET freeze_seen = greatest(coalesce(freeze_seen, 0), $2) WHERE worker_id = $1", [workerId, gen]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Runs `fn` (which locks and empties the month) with the month frozen: steps
 * 1, 3 and 4 of the protocol above. The freeze row goes whatever `fn` does.
 */
export async function withFrozenMonth<T>(
  pool: pg.Pool,
  /** The month's partition: its name, the name quoted for SQL (partitions.ts ident), its bounds. */
  month: { name: string; quoted: string; from: Date; to: Date },
  fn: () => Promise<T>,
  opts: { ackTimeoutMs?: number; log?: Logger } = {},
): Promise<T> {
  // One retention runner at a time (its advisory lock): a row left by a run that died is replaced.
  await pool.query(`DELETE FROM partition_freezes WHERE "partition" = $1`, [month.name]);
  const { rows } = await pool.query<{ gen: string }>(
    `INSERT INTO partition_freezes ("partition", lo, hi, expires_at) VALUES ($1, $2, $3, now() + interval '${FREEZE_EXPIRES}') RETURNING gen`,
    [month.name, month.from, month.to],
  );
  const gen = Number(rows[0].gen);
  try {
    await pool.query("SELECT pg_notify($1, $2)", [FREEZE_CHANNEL, String(gen)]);
    const late = await awaitAcks(pool, gen, opts.ackTimeoutMs ?? ACK_TIMEOUT_MS);
    if (late.length > 0) opts.log?.warn({ partition: month.name, workers: late }, "workers did not acknowledge the partition freeze in time; they may wait for its lock");
    await pool.query(
      `UPDATE partition_freezes SET in_flight = coalesce((SELECT jsonb_object_agg(subscription_id, n) FROM (
           SELECT subscription_id, count(*)::int AS n FROM ${month.quoted} WHERE state = 'in_flight' GROUP BY 1) c), '{}')
        WHERE gen = $1`,
      [gen],
    );
    await pool.query("SELECT pg_notify($1, $2)", [FREEZE_CHANNEL, String(gen)]);
    return await fn();
  } finally {
    await pool.query("DELETE FROM partition_freezes WHERE gen = $1", [gen]).catch(() => {});
    await pool.query("SELECT pg_notify($1, $2)", [FREEZE_CHANNEL, String(gen)]).catch(() => {});
  }
}

/** Waits until every live worker has acknowledged `gen`; returns those that had not when `timeoutMs` ran out. */
async function awaitAcks(pool: pg.Pool, gen: number, timeoutMs: number): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ worker_id: string }>(
      `SELECT worker_id FROM worker_heartbeats
        WHERE stopped_at IS NULL AND beat_at > now() - make_interval(secs => $2) AND coalesce(freeze_seen, 0) < $1`,
      [gen, LIVE_WORKER_SECONDS],
    );
    if (rows.length === 0 || Date.now() >= until) return rows.map((r) => r.worker_id);
    await new Promise((r) => setTimeout(r, 10));
  }
}
