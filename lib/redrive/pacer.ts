// The pacer's step (docs/DESIGN.md invariant 9): moves a running batch's next
// items at the batch's rate, with its kind's one guarded ledger statement: a
// redrive's dead letters back to pending (lib/ledger/sql/redrive.ts), a
// recover's deliveries sent again (recover.ts), a backfill's deliveries
// created (backfill.ts). Called by worker/redrive-pacer.ts.
//
// Safe with several worker processes: the batch row is taken FOR UPDATE SKIP
// LOCKED, so one pacer steps a batch at a time and the others pass it by. The
// rate budget lives in the row (paced_until, in database time), so a second
// pacer cannot double the rate, and a restart resumes where the last committed
// step left off; a crash mid-step rolls the whole step back.
import "server-only";
import type pg from "pg";
import { DELIVERIES_CHANNEL, RECORD_ITEMS_SQL } from "./sql";
import { findNextBatchItems, redriveDeliveries } from "../ledger/sql/redrive";
import { findNextRecoverItems, recoverDeliveries, RECOVER_DEFAULT_STATES, type RecoverableState } from "../ledger/sql/recover";
import { createBackfillDeliveries, findNextBackfillItems } from "../ledger/sql/backfill";
import { inTransaction } from "../db/client";

/** Unused budget never accrues past this: after a pause or restart the batch resumes at its rate, not in a burst. */
const MAX_BURST_SECONDS = 1;
/** One step never moves more than this many rows (one statement, a short transaction). */
const MAX_ITEMS_PER_STEP = 2_000;

export type StepResult = { batchId: string; handled: number; redriven: number; skipped: number; done: boolean };

export async function listRunningBatchIds(pool: pg.Pool | pg.PoolClient): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM redrive_batches WHERE status = 'running' ORDER BY created_at LIMIT 100");
  return rows.map((r) => r.id);
}

/** One step of one batch; null when another pacer holds it or it is no longer running. */
export async function advanceBatch(client: pg.PoolClient, batchId: string): Promise<StepResult | null> {
  return inTransaction(client, async () => {
    const { rows } = await client.query<{
      rate: number;
      kind: BatchKind;
      filter: { subscriptionId?: string; states?: RecoverableState[] };
      latest_state_wins: boolean;
      actor: string;
      reason: string;
      position: number;
      matched: number;
      base: string;
      allowance: number;
    }>(
      `SELECT b.rate_per_second AS rate, b.kind, b.filter, b.latest_state_wins, b.actor, b.reason, b.position, b.matched,
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
    if (!b || b.allowance <= 0) return b ? { batchId, handled: 0, redriven: 0, skipped: 0, done: false } : null;
    const n = Math.min(b.allowance, MAX_ITEMS_PER_STEP);
    const { handled, redriven, lastSeq } = await stepItems(client, batchId, b, n);
    const position = handled ? lastSeq : b.position;
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
    if (redriven > 0) await client.query("SELECT pg_notify($1, '')", [DELIVERIES_CHANNEL]);
    return { batchId, handled, redriven, skipped: handled - redriven, done };
  });
}

type BatchKind = "redrive" | "recover" | "backfill";

type Step = { handled: number; redriven: number; lastSeq: number };

/**
 * The next `n` items of a batch, each moved or skipped by its kind's guarded
 * statement, and every outcome recorded. Three statements, each on an index:
 * read the items, move the eligible ones, record the outcomes (a backfill
 * creates and records in one).
 */
async function stepItems(
  client: pg.PoolClient,
  batchId: string,
  b: { kind: BatchKind; filter: { subscriptionId?: string; states?: RecoverableState[] }; latest_state_wins: boolean; actor: string; reason: string; position: number },
  n: number,
): Promise<Step> {
  if (b.kind === "backfill") {
    const items = await findNextBackfillItems(client, batchId, b.position, n);
    const outcomes = await createBackfillDeliveries(client, batchId, b.filter.subscriptionId!, items);
    const created = [...outcomes.values()].filter((o) => o === "created").length;
    return { handled: items.length, redriven: created, lastSeq: items.length ? items[items.length - 1].seq : b.position };
  }
  if (b.kind === "recover") {
    const states = b.filter.states ?? [...RECOVER_DEFAULT_STATES];
    const items = await findNextRecoverItems(client, batchId, b.position, n);
    const eligible = items.filter((i) => i.sub_state === "active" && (states as string[]).includes(i.state)).map((i) => i.delivery_id);
    const moved = new Set(await recoverDeliveries(client, eligible, states, { actor: b.actor, reason: b.reason, batchId }));
    const outcomes = items.map((i) =>
      moved.has(i.delivery_id)
        ? "resent"
        : i.sub_state !== "active"
          ? "skipped_subscription_inactive"
          : i.state === "pending" || i.state === "in_flight" || i.state === "scheduled"
            ? "skipped_in_progress"
            : "skipped_state_changed",
    );
    if (items.length) await client.query(RECORD_ITEMS_SQL, [batchId, items.map((i) => i.seq), outcomes]);
    return { handled: items.length, redriven: moved.size, lastSeq: items.length ? items[items.length - 1].seq : b.position };
  }
  const items = await findNextBatchItems(client, batchId, b.position, n, b.latest_state_wins);
  const eligible = items.filter((i) => !i.superseded).map((i) => i.delivery_id);
  const moved = new Set(await redriveDeliveries(client, eligible, b.actor));
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
  return { handled: items.length, redriven: moved.size, lastSeq: items.length ? items[items.length - 1].seq : b.position };
}
