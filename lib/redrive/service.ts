// Redrive use cases (issue 5; DESIGN.md invariants 1, 7, 9), one function each:
// redriveDelivery, previewRedrive, createRedriveBatch, getRedriveBatch,
// listRedriveBatches, cancelRedriveBatch. Each mutation writes its audit row
// in the same transaction as the change (STYLE.md #10): if the change fails,
// no audit row remains; if the audit write fails, the change rolls back.
import type { PrismaClient, Tx } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { toDeliveryView, type DeliveryView } from "../deliveries/queries";
import { DELIVERIES_CHANNEL, REDRIVES_CHANNEL, REDRIVE_SQL, RETRY_NOW_SQL, SUPERSEDED_SQL, filterWhere } from "./sql";
import { ZRedriveFilter, type TCreateRedrive, type TRedriveFilter } from "./schema";

export const SAMPLE_SIZE = 10;

type SubRow = { id: string; name: string; state: string; stateReason: string | null };

/** The message that says what to do when a subscription is not active (STYLE.md #12). */
export function inactiveSubscriptionMessage(sub: SubRow): string {
  const why = sub.stateReason ? ` (${sub.stateReason})` : "";
  if (sub.state === "paused")
    return (
      `Subscription ${sub.id} (${sub.name}) is paused${why}, so a redrive would only be held. ` +
      `Resume it first (Resume on its page, or PATCH /api/v1/subscriptions/${sub.id} {"state":"active"}), then redrive.`
    );
  return (
    `Subscription ${sub.id} (${sub.name}) is disabled${why}: its endpoint answered that it is gone or is not allowed. ` +
    `Fix the URL with the district and re-enable it (PATCH /api/v1/subscriptions/${sub.id} {"url": "…", "state":"active"}), then redrive.`
  );
}

async function findSubscription(tx: Tx | PrismaClient, id: string): Promise<SubRow | null> {
  return tx.subscription.findUnique({ where: { id }, select: { id: true, name: true, state: true, stateReason: true } });
}

/**
 * Single redrive. A dead-lettered delivery goes back to pending with a fresh
 * attempt budget and its next attempt recorded as trigger `redrive` by the
 * caller; a scheduled one is made due now ("retry now", trigger `manual`).
 * Anything else is refused with 409 and what to do instead.
 */
export async function redriveDelivery(
  prisma: PrismaClient,
  opts: { id: string; reason: string; principal: Principal },
): Promise<DeliveryView & { redrive: { action: "redrive" | "retry_now" } }> {
  return prisma.$transaction(async (tx) => {
    const d = await tx.delivery.findUnique({ where: { id: opts.id } });
    if (!d) throw notFound("Delivery", opts.id);
    const sub = (await findSubscription(tx, d.subscriptionId))!;
    if (d.state !== "dead_letter" && d.state !== "scheduled") throw stateConflict(d.id, d.state, d.deliveredAt);
    if (sub.state !== "active") throw new AppError("conflict", inactiveSubscriptionMessage(sub), { subscriptionId: sub.id, subscriptionState: sub.state });

    const action = d.state === "dead_letter" ? "redrive" : "retry_now";
    const moved =
      action === "redrive"
        ? await tx.$queryRawUnsafe<{ id: string }[]>(REDRIVE_SQL, [d.id], opts.principal.actor)
        : await tx.$queryRawUnsafe<{ id: string }[]>(RETRY_NOW_SQL, d.id, opts.principal.actor);
    if (moved.length === 0) {
      // Someone else moved it between our read and our guarded update.
      const now = await tx.delivery.findUniqueOrThrow({ where: { id: d.id }, select: { state: true, deliveredAt: true } });
      throw stateConflict(d.id, now.state, now.deliveredAt, true);
    }
    await writeAudit(tx, {
      actor: opts.principal.actor,
      action: action === "redrive" ? "delivery.redrive" : "delivery.retry_now",
      targetType: "delivery",
      targetId: d.id,
      reason: opts.reason,
      details: {
        count: 1,
        subscriptionId: d.subscriptionId,
        eventId: d.eventId,
        deliveryKey: d.deliveryKey,
        from: d.state,
        deadLetterReason: d.deadLetterReason,
        lastErrorClass: d.lastErrorClass,
        lastStatusCode: d.lastStatusCode,
      },
    });
    await tx.$executeRawUnsafe(`SELECT pg_notify('${DELIVERIES_CHANNEL}', $1)`, d.subscriptionId);
    const after = await tx.delivery.findUniqueOrThrow({ where: { id: d.id } });
    return { ...toDeliveryView(after), redrive: { action } };
  });
}

function stateConflict(id: string, state: string, deliveredAt: Date | null, raced = false): AppError {
  const prefix = raced ? `Delivery ${id} changed while you were redriving it: ` : `Delivery ${id} `;
  const msg =
    state === "delivered"
      ? `${prefix}${raced ? "it " : ""}was already delivered${deliveredAt ? ` at ${deliveredAt.toISOString()}` : ""}; nothing to redrive.`
      : state === "pending" || state === "in_flight"
        ? `${prefix}${raced ? "it " : ""}is already ${state === "pending" ? "due (pending)" : "being sent (in flight)"}${raced ? ", probably redriven by someone else" : ""}; nothing to redrive.`
        : `${prefix}is ${state}; only dead-lettered deliveries can be redriven (and scheduled ones retried now).`;
  return new AppError("conflict", msg, { state });
}

export type RedriveSample = {
  id: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  deadLetterReason: string | null;
  lastErrorClass: string | null;
  lastStatusCode: number | null;
  lastErrorMessage: string | null;
  deadLetteredAt: string | null;
};

export type RedrivePreview = {
  matched: number;
  /** Of `matched`, how many "latest state wins" would skip right now (only when asked). */
  superseded: number | null;
  oldestDeadLetteredAt: string | null;
  newestDeadLetteredAt: string | null;
  sample: RedriveSample[];
  /** Dead letters matching the filter whose subscription is paused or disabled: not included. */
  held: { subscriptionId: string; state: string; count: number; message: string }[];
};

async function checkFilterSubscription(tx: Tx | PrismaClient, filter: TRedriveFilter) {
  if (!filter.subscriptionId) return;
  const sub = await findSubscription(tx, filter.subscriptionId);
  if (!sub) throw new AppError("bad_request", `filter.subscriptionId: subscription ${filter.subscriptionId} does not exist.`);
  if (sub.state !== "active") throw new AppError("conflict", inactiveSubscriptionMessage(sub), { subscriptionId: sub.id, subscriptionState: sub.state });
}

/** What a bulk redrive would do: the exact count, a sample (oldest first) and what is held back. */
export async function previewRedrive(prisma: PrismaClient | Tx, opts: { filter: TRedriveFilter; latestStateWins?: boolean }): Promise<RedrivePreview> {
  const filter = ZRedriveFilter.parse(opts.filter);
  await checkFilterSubscription(prisma, filter);
  const params: unknown[] = [];
  const where = filterWhere(filter, params);
  const [agg] = await prisma.$queryRawUnsafe<{ matched: number; oldest: Date | null; newest: Date | null; superseded: number | null }[]>(
    `SELECT count(*)::int AS matched, min(d.dead_lettered_at) AS oldest, max(d.dead_lettered_at) AS newest,
            ${opts.latestStateWins ? `(count(*) FILTER (WHERE ${SUPERSEDED_SQL}))::int` : "NULL::int"} AS superseded
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
       ${opts.latestStateWins ? "JOIN events e ON e.id = d.event_id" : ""}
      WHERE ${where} AND s.state = 'active'`,
    ...params,
  );
  const sample = await prisma.$queryRawUnsafe<(Omit<RedriveSample, "deadLetteredAt"> & { deadLetteredAt: Date | null })[]>(
    `SELECT d.id, d.event_id AS "eventId", d.event_type AS "eventType", d.subscription_id AS "subscriptionId",
            d.dead_letter_reason AS "deadLetterReason", d.last_error_class AS "lastErrorClass",
            d.last_status_code AS "lastStatusCode", d.last_error_message AS "lastErrorMessage",
            d.dead_lettered_at AS "deadLetteredAt"
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
      WHERE ${where} AND s.state = 'active'
      ORDER BY d.dead_lettered_at, d.id LIMIT ${SAMPLE_SIZE}`,
    ...params,
  );
  const held = await prisma.$queryRawUnsafe<{ subscriptionId: string; name: string; state: string; stateReason: string | null; count: number }[]>(
    `SELECT s.id AS "subscriptionId", s.name, s.state, s.state_reason AS "stateReason", count(*)::int AS count
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
      WHERE ${where} AND s.state <> 'active'
      GROUP BY s.id, s.name, s.state, s.state_reason ORDER BY count(*) DESC`,
    ...params,
  );
  return {
    matched: agg.matched,
    superseded: agg.superseded,
    oldestDeadLetteredAt: agg.oldest ? new Date(agg.oldest).toISOString() : null,
    newestDeadLetteredAt: agg.newest ? new Date(agg.newest).toISOString() : null,
    sample: sample.map((r) => ({ ...r, deadLetteredAt: r.deadLetteredAt ? new Date(r.deadLetteredAt).toISOString() : null })),
    held: held.map((h) => ({
      subscriptionId: h.subscriptionId,
      state: h.state,
      count: h.count,
      message: inactiveSubscriptionMessage({ id: h.subscriptionId, name: h.name, state: h.state, stateReason: h.stateReason }),
    })),
  };
}

export type RedriveBatchView = {
  id: string;
  status: string;
  filter: TRedriveFilter;
  reason: string;
  actor: string;
  ratePerSecond: number;
  latestStateWins: boolean;
  matched: number;
  redriven: number;
  skipped: number;
  remaining: number;
  cancelledBy: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
};

export type RedriveBatchProgress = RedriveBatchView & {
  /** Of the redriven: delivered since, dead-lettered again, still on their way. */
  deliveredSince: number;
  failedAgain: number;
  inProgress: number;
  skippedBy: { notDeadLettered: number; subscriptionInactive: number; superseded: number };
  /** Seconds until every item is handled at the batch's rate (running batches only). */
  etaSeconds: number | null;
};

type BatchRow = {
  id: string;
  status: string;
  filter: unknown;
  reason: string;
  actor: string;
  ratePerSecond: number;
  latestStateWins: boolean;
  matched: number;
  redriven: number;
  skipped: number;
  position: number;
  cancelledBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
};

function toBatchView(b: BatchRow): RedriveBatchView {
  return {
    id: b.id,
    status: b.status,
    filter: b.filter as TRedriveFilter,
    reason: b.reason,
    actor: b.actor,
    ratePerSecond: b.ratePerSecond,
    latestStateWins: b.latestStateWins,
    matched: b.matched,
    redriven: b.redriven,
    skipped: b.skipped,
    remaining: Math.max(0, b.matched - b.position),
    cancelledBy: b.cancelledBy,
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
    finishedAt: b.finishedAt ? b.finishedAt.toISOString() : null,
  };
}

/**
 * A bulk redrive: snapshots the matching dead letters (oldest first) into a
 * persisted batch that the worker's pacer drains at `ratePerSecond`. The
 * batch, its items and the audit row commit together.
 */
export async function createRedriveBatch(
  prisma: PrismaClient,
  input: Omit<TCreateRedrive, "dryRun" | "reason"> & { reason: string },
  principal: Principal,
): Promise<RedriveBatchView> {
  const filter = ZRedriveFilter.parse(input.filter ?? {});
  return prisma.$transaction(
    async (tx) => {
      await checkFilterSubscription(tx, filter);
      const batch = await tx.redriveBatch.create({
        data: {
          filter: filter as object,
          reason: input.reason,
          actor: principal.actor,
          ratePerSecond: input.ratePerSecond,
          latestStateWins: input.latestStateWins,
        },
      });
      const params: unknown[] = [batch.id];
      const where = filterWhere(filter, params);
      const matched = await tx.$executeRawUnsafe(
        `INSERT INTO redrive_batch_items (batch_id, seq, delivery_id)
         SELECT $1, row_number() OVER (ORDER BY d.dead_lettered_at, d.id), d.id
           FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
          WHERE ${where} AND s.state = 'active'`,
        ...params,
      );
      if (matched === 0)
        throw new AppError(
          "conflict",
          "No dead-lettered delivery on an active subscription matches this filter; nothing to redrive. Preview with dryRun to see what matches.",
          { filter },
        );
      // Pacing starts now, in database time (the pacers' clock): the first
      // items move one tick from now, not in a burst.
      await tx.$executeRawUnsafe(`UPDATE redrive_batches SET matched = $2, paced_until = clock_timestamp() WHERE id = $1`, batch.id, matched);
      const updated = await tx.redriveBatch.findUniqueOrThrow({ where: { id: batch.id } });
      await writeAudit(tx, {
        actor: principal.actor,
        action: "redrive.create",
        targetType: "redrive_batch",
        targetId: batch.id,
        reason: input.reason,
        details: { filter, count: matched, ratePerSecond: input.ratePerSecond, latestStateWins: input.latestStateWins },
      });
      await tx.$executeRawUnsafe(`SELECT pg_notify('${REDRIVES_CHANNEL}', $1)`, batch.id);
      return toBatchView(updated);
    },
    { timeout: 60_000 },
  );
}

export async function getRedriveBatch(prisma: PrismaClient, id: string): Promise<RedriveBatchProgress> {
  const b = await prisma.redriveBatch.findUnique({ where: { id } });
  if (!b) throw notFound("Redrive batch", id);
  const [c] = await prisma.$queryRawUnsafe<
    { delivered: number; failed: number; inProgress: number; notDead: number; inactive: number; superseded: number }[]
  >(
    `SELECT count(*) FILTER (WHERE i.outcome = 'redriven' AND d.state = 'delivered')::int AS delivered,
            count(*) FILTER (WHERE i.outcome = 'redriven' AND d.state = 'dead_letter')::int AS failed,
            count(*) FILTER (WHERE i.outcome = 'redriven' AND d.state IN ('pending', 'in_flight', 'scheduled'))::int AS "inProgress",
            count(*) FILTER (WHERE i.outcome = 'skipped_not_dead_lettered')::int AS "notDead",
            count(*) FILTER (WHERE i.outcome = 'skipped_subscription_inactive')::int AS inactive,
            count(*) FILTER (WHERE i.outcome = 'skipped_superseded')::int AS superseded
       FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id
      WHERE i.batch_id = $1 AND i.outcome IS NOT NULL`,
    id,
  );
  const view = toBatchView(b);
  return {
    ...view,
    deliveredSince: c.delivered,
    failedAgain: c.failed,
    inProgress: c.inProgress,
    skippedBy: { notDeadLettered: c.notDead, subscriptionInactive: c.inactive, superseded: c.superseded },
    etaSeconds: b.status === "running" ? Math.ceil(view.remaining / b.ratePerSecond) : null,
  };
}

export async function listRedriveBatches(prisma: PrismaClient, opts: { status?: string; limit?: number } = {}): Promise<RedriveBatchView[]> {
  const rows = await prisma.redriveBatch.findMany({
    where: opts.status ? { status: opts.status } : {},
    orderBy: { createdAt: "desc" },
    take: opts.limit ?? 50,
  });
  return rows.map(toBatchView);
}

/** Stops a running batch where it is: items not yet reached stay dead-lettered. */
export async function cancelRedriveBatch(
  prisma: PrismaClient,
  opts: { id: string; principal: Principal; reason?: string },
): Promise<RedriveBatchView> {
  return prisma.$transaction(async (tx) => {
    // Waits for a pacer step in progress (it holds the row), so the counts below are final.
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      `UPDATE redrive_batches SET status = 'cancelled', cancelled_by = $2, finished_at = now(), updated_at = now()
        WHERE id = $1 AND status = 'running' RETURNING id`,
      opts.id,
      opts.principal.actor,
    );
    const b = await tx.redriveBatch.findUnique({ where: { id: opts.id } });
    if (!b) throw notFound("Redrive batch", opts.id);
    if (rows.length === 0) throw new AppError("conflict", `Redrive batch ${opts.id} is already ${b.status}; only a running batch can be cancelled.`, { status: b.status });
    await writeAudit(tx, {
      actor: opts.principal.actor,
      action: "redrive.cancel",
      targetType: "redrive_batch",
      targetId: b.id,
      reason: opts.reason ?? null,
      details: { matched: b.matched, redriven: b.redriven, skipped: b.skipped, remaining: b.matched - b.position, batchReason: b.reason },
    });
    return toBatchView(b);
  });
}
