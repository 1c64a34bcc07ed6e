// The pacer's step (DESIGN.md invariant 9): moves a running batch's next items
// back to pending at the batch's rate. Called by worker/redrive-pacer.ts.
//
// Safe with several worker processes: the batch row is taken FOR UPDATE SKIP
// LOCKED, so one pacer steps a batch at a time and the others pass it by. The
// rate budget lives in the row (paced_until, in database time), so a second
// pacer cannot double the rate, and a restart resumes where the last committed
// step left off; a crash mid-step rolls the whole step back.
import type pg from "pg";
import { DELIVERIES_CHANNEL, NEXT_ITEMS_SQL, RECORD_ITEMS_SQL, REDRIVE_SQL } from "./sql";

/** Unused budget never accrues past this: after a pause or restart the batch resumes at its rate, not in a burst. */
export const MAX_BURST_SECONDS = 1;
/** One step never moves more than this many rows (one statement, a short transaction). */
export const MAX_ITEMS_PER_STEP = 2_000;

export type StepResult = { batchId: string; handled: number; redriven: number; skipped: number; done: boolean };

export async function listRunningBatchIds(pool: pg.Pool | pg.PoolClient): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM redrive_batches WHERE status = 'running' ORDER BY created_at LIMIT 100");
  return rows.map((r) => r.id);
}

/** One step of one batch; null when another pacer holds it or it is no longer running. */
export async function advanceBatch(client: pg.PoolClient, batchId: string): Promise<StepResult | null> {
  await client.query("BEGIN");
  try {
    const { rows } = await client.query<{
      rate: number;
      latest_state_wins: boolean;
      actor: string;
      position: number;
      matched: number;
      base: string;
      allowance: number;
    }>(
      `SELECT b.rate_per_second AS rate, b.latest_state_wins, b.actor, b.position, b.matched,
              x.base::text AS base,
              floor(extract(epoch FROM c.now_ts - x.base) * b.rate_per_second)::int AS allowance
         FROM redrive_batches b
        CROSS JOIN LATERAL (SELECT clock_timestamp() AS now_ts) c
        CROSS JOIN LATERAL (SELECT GREATEST(b.paced_until, c.now_ts - make_interval(secs => $2)) AS base) x
        WHERE b.id = $1 AND b.status = 'running'
        FOR UPDATE OF b SKIP LOCKED`,
      [batchId, MAX_BURST_SECONDS],
    );
    const b = rows[0];
    if (!b || b.allowance <= 0) {
      await client.query("ROLLBACK");
      return b ? { batchId, handled: 0, redriven: 0, skipped: 0, done: false } : null;
    }
    const n = Math.min(b.allowance, MAX_ITEMS_PER_STEP);
    // Three statements, each on an index: read the next items, move the
    // eligible ones with the one guarded redrive statement, record outcomes.
    const { rows: items } = await client.query<{ seq: number; delivery_id: string; sub_state: string; superseded: boolean }>(NEXT_ITEMS_SQL, [
      batchId,
      b.position,
      n,
      b.latest_state_wins,
    ]);
    const eligible = items.filter((i) => !i.superseded).map((i) => i.delivery_id);
    const moved = new Set(
      eligible.length ? (await client.query<{ id: string }>(REDRIVE_SQL, [eligible, b.actor])).rows.map((r) => r.id) : [],
    );
    const outcomes = items.map((i) =>
      moved.has(i.delivery_id)
        ? "redriven"
        : i.superseded
          ? "skipped_superseded"
          : i.sub_state !== "active"
            ? "skipped_subscription_inactive"
            : "skipped_not_dead_lettered",
    );
    if (items.length) await client.query(RECORD_ITEMS_SQL, [batchId, items.map((i) => i.seq), outcomes]);
    const handled = items.length;
    const redriven = moved.size;
    const position = handled ? items[handled - 1].seq : b.position;
    const done = position >= b.matched || handled < n;
    await client.query(
      `UPDATE redrive_batches
          SET position = $2, redriven = redriven + $3, skipped = skipped + $4,
              paced_until = $5::timestamptz + make_interval(secs => $6::float8 / rate_per_second),
              status = CASE WHEN $7 THEN 'done' ELSE status END,
              finished_at = CASE WHEN $7 THEN now() ELSE finished_at END,
              updated_at = now()
        WHERE id = $1`,
      [batchId, position, redriven, handled - redriven, b.base, handled, done],
    );
    if (redriven > 0) await client.query(`SELECT pg_notify('${DELIVERIES_CHANNEL}', '')`);
    await client.query("COMMIT");
    return { batchId, handled, redriven, skipped: handled - redriven, done };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}
