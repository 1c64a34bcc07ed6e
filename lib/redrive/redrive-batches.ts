// Redrive use cases (docs/DESIGN.md invariants 1, 7, 9), one function each:
// redriveDelivery, previewRedrive, createRedriveBatch, getRedriveBatch,
// listRedriveBatchPage, cancelRedriveBatch. Each mutation writes its audit row
// in the same transaction as the change (docs/STYLE.md): if the change fails,
// no audit row remains; if the audit write fails, the change rolls back. The
// statements on the ledger are lib/ledger's (sql/redrive.ts, retry-now.ts,
// get-delivery.ts); this module holds the checks, the batches and the audit.
import "server-only";
import type { PrismaClient, Tx } from "../db/prisma";
import { Prisma, type RedriveBatch } from "../generated/prisma/client";
import { ledgerDb, type LedgerDb } from "../ledger/read/db";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { toDeliveryView } from "../deliveries/queries";
import type { DeliveryView } from "../api/views";
import type { RedriveSample } from "../ledger/read/types";
import { DELIVERIES_CHANNEL, REDRIVES_CHANNEL } from "./sql";
import { getDelivery } from "../ledger/sql/get-delivery";
import { isFinishedBatch, type BatchStatus } from "../ledger/states";
import { retryNow } from "../ledger/sql/retry-now";
import { countBatchProgress, countInProgress } from "../ledger/sql/recover";
import { countHeldMatches, countRedriveMatches, redriveDeliveries, sampleRedriveMatches, snapshotRedriveItems } from "../ledger/sql/redrive";
import { findPermanentMatches } from "../ledger/sql/permanent-matches";
import { findAttempts } from "../ledger/sql/find-deliveries";
import { ZListRedrives, ZRedriveFilter, type BatchKind, type TCreateRedrive, type TListRedrives, type TRedriveFilter } from "./redrive-input";
import { badPageCursor, decodePageCursor, encodePageCursor } from "../api/page-cursor";
import { GLOBAL_SCOPE, scopeOf, subscriptionWhere, type Scope } from "../tenants/scope";

/** What a recover or backfill batch selected: the subscription, the window (until resolved to a time) and, for a recover, the states. */
export type BatchWindowFilter = { subscriptionId: string; since: string; until: string; states?: string[] };

export const SAMPLE_SIZE = 10;

type SubRow = { id: string; name: string; tenant?: string | null; state: string; stateReason: string | null };

/**
 * A district's person in the dashboard (its own account or its portal) sends one of its deliveries again from the
 * delivery's page: it is told what to do there, on its subscription's page, in its words. Everyone else, and a
 * district's API token (a program, read by whoever writes it), keeps the API call and the operators' words.
 */
export function speaksToDistrict(principal: Principal): boolean {
  return Boolean(principal.tenantId) && principal.kind !== "token";
}

/**
 * The message that says what to do when a subscription is not active (docs/STYLE.md: errors say what to do).
 * `district`: said to a district in the dashboard (speaksToDistrict) about sending one delivery again.
 */
export function inactiveSubscriptionMessage(sub: SubRow, opts: { district?: boolean } = {}): string {
  const why = sub.stateReason ? ` (${sub.stateReason})` : "";
  if (opts.district)
    return sub.state === "paused"
      ? `${sub.name} is paused${why}, so this delivery would only be held. Resume it first (Resume deliveries on the subscription's page, ` +
          `Subscriptions › ${sub.name}), then send this delivery again.`
      : `${sub.name} is disabled${why}: your endpoint answered that it is gone or refused it. Fix its URL and resume it first ` +
          `(Edit configuration, then Resume deliveries, on the subscription's page, Subscriptions › ${sub.name}), then send this delivery again.`;
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

/** The subscription in `scope`; null when there is none or it is another tenant's. */
async function findSubscription(tx: Tx | PrismaClient, id: string, scope: Scope = GLOBAL_SCOPE): Promise<SubRow | null> {
  return tx.subscription.findFirst({ where: { id, ...subscriptionWhere(scope) }, select: { id: true, name: true, tenant: true, state: true, stateReason: true } });
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
    // Another tenant's delivery is not found for a scoped principal (404, nothing written).
    const d = await getDelivery(tx, opts.id, scopeOf(opts.principal));
    if (!d) throw notFound("Delivery", opts.id);
    const sub = (await findSubscription(tx, d.subscriptionId))!;
    if (d.state !== "dead_letter" && d.state !== "resolved" && d.state !== "scheduled") throw stateConflict(d.id, d.state, d.deliveredAt);
    if (sub.state !== "active")
      throw new AppError("conflict", inactiveSubscriptionMessage(sub, { district: speaksToDistrict(opts.principal) }), {
        subscriptionId: sub.id,
        subscriptionState: sub.state,
      });

    const action = d.state === "scheduled" ? "retry_now" : "redrive";
    const moved =
      action === "redrive"
        ? (await redriveDeliveries(tx, [d.id], opts.principal.actor, { reopenResolved: true })).length > 0
        : await retryNow(tx, d.id, opts.principal.actor);
    if (!moved) {
      // Someone else moved it between our read and our guarded update.
      const now = (await getDelivery(tx, d.id))!;
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
    await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${d.subscriptionId})`;
    const after = (await getDelivery(tx, d.id))!;
    return { ...toDeliveryView(after), redrive: { action } };
  });
}

function stateConflict(id: string, state: string, deliveredAt: string | null, raced = false): AppError {
  const prefix = raced ? `Delivery ${id} changed while you were redriving it: ` : `Delivery ${id} `;
  const msg =
    state === "delivered"
      ? `${prefix}${raced ? "it " : ""}was already delivered${deliveredAt ? ` at ${deliveredAt}` : ""}; nothing to redrive.`
      : state === "pending" || state === "in_flight"
        ? `${prefix}${raced ? "it " : ""}is already ${state === "pending" ? "due (pending)" : "being sent (in flight)"}${raced ? ", probably redriven by someone else" : ""}; nothing to redrive.`
        : `${prefix}is ${state}; only dead-lettered or resolved deliveries can be redriven (and scheduled ones retried now).`;
  return new AppError("conflict", msg, { state });
}

export type RedrivePreview = {
  matched: number;
  /** Of `matched`, how many "latest state wins" would skip right now (only when asked). */
  superseded: number | null;
  oldestDeadLetteredAt: string | null;
  newestDeadLetteredAt: string | null;
  sample: RedriveSample[];
  /** Dead letters matching the filter whose subscription is paused or disabled: not included. */
  held: { subscriptionId: string; state: string; count: number; message: string }[];
  /** Of `matched`, those the receiver rejected as permanent: sent again unchanged, they get the same answer. */
  permanent: PermanentSummary;
};

export type PermanentSummary = {
  count: number;
  /** Who answered what, most first (at most PERMANENT_GROUPS), each with one example's answer as the receiver said it. */
  answers: { subscriptionId: string; subscriptionName: string; statusCode: number | null; count: number; excerpt: string | null }[];
};

const PERMANENT_GROUPS = 3;

/** The permanent rejections a redrive would send again, each group with its example's last answer (attempts_delivery). */
async function summarisePermanent(db: LedgerDb, filter: TRedriveFilter, scope: Scope): Promise<PermanentSummary> {
  const groups = await findPermanentMatches(db, filter, PERMANENT_GROUPS, scope);
  const attempts = await findAttempts(
    db,
    groups.map((g) => g.exampleId),
    { excerptChars: 200 },
  );
  return {
    count: groups[0]?.total ?? 0,
    answers: groups.map((g) => {
      const last = attempts.get(g.exampleId)?.at(-1);
      return {
        subscriptionId: g.subscriptionId,
        subscriptionName: g.subscriptionName,
        statusCode: g.statusCode,
        count: g.count,
        excerpt: last?.responseExcerpt ?? last?.errorMessage ?? null,
      };
    }),
  };
}

/**
 * The filter's subscription, when it names one: it must exist in `scope` (another tenant's is answered like an unknown
 * one: 400, nothing revealed) and be active. Whatever the filter says, the statements confine the rows to `scope`.
 */
async function checkFilterSubscription(tx: Tx | PrismaClient, filter: TRedriveFilter, scope: Scope = GLOBAL_SCOPE): Promise<SubRow | null> {
  if (!filter.subscriptionId) return null;
  const sub = await findSubscription(tx, filter.subscriptionId, scope);
  if (!sub) {
    // A scoped caller gets the same 404 for another tenant's subscription as for none (existence is not revealed).
    if (scope.tenantId !== null) throw notFound("Subscription", filter.subscriptionId);
    throw new AppError("bad_request", `filter.subscriptionId: subscription ${filter.subscriptionId} does not exist.`);
  }
  if (sub.state !== "active") throw new AppError("conflict", inactiveSubscriptionMessage(sub), { subscriptionId: sub.id, subscriptionState: sub.state });
  return sub;
}

/** What a bulk redrive would do: the exact count, a sample (oldest first) and what is held back, within `scope`. */
export async function previewRedrive(prisma: PrismaClient, opts: { filter: TRedriveFilter; latestStateWins?: boolean; scope?: Scope }): Promise<RedrivePreview> {
  const filter = ZRedriveFilter.parse(opts.filter);
  const scope = opts.scope ?? GLOBAL_SCOPE;
  await checkFilterSubscription(prisma, filter, scope);
  const db = ledgerDb();
  const [agg, sample, held, permanent] = await Promise.all([
    countRedriveMatches(db, filter, { latestStateWins: opts.latestStateWins, scope }),
    sampleRedriveMatches(db, filter, SAMPLE_SIZE, scope),
    countHeldMatches(db, filter, scope),
    summarisePermanent(db, filter, scope),
  ]);
  return {
    matched: agg.matched,
    superseded: agg.superseded,
    oldestDeadLetteredAt: agg.oldest ? new Date(agg.oldest).toISOString() : null,
    newestDeadLetteredAt: agg.newest ? new Date(agg.newest).toISOString() : null,
    sample,
    held: held.map((h) => ({
      subscriptionId: h.subscriptionId,
      state: h.state,
      count: h.count,
      message: inactiveSubscriptionMessage({ id: h.subscriptionId, name: h.name, state: h.state, stateReason: h.stateReason }),
    })),
    permanent,
  };
}

export type RedriveBatchView = {
  id: string;
  /** redrive (dead letters), recover (a subscription's window sent again) or backfill (deliveries created for past events). */
  kind: BatchKind;
  /** running, then done or cancelled (redrive_batches' CHECK holds it to these). */
  status: BatchStatus;
  /** A redrive's dead-letter filter, or a recover's or backfill's {subscriptionId, since, until, states?}. */
  filter: TRedriveFilter | BatchWindowFilter;
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
  /** When the pacer found none of a done or cancelled batch's deliveries still on its way; null until then (and for a running batch). */
  settledAt: string | null;
};

/** A batch as the list shows it. */
export type RedriveBatchListItem = RedriveBatchView & {
  /**
   * A done or cancelled batch not yet settled: its deliveries still on their way (queued, being sent or retrying), as
   * its page counts them. 0 for a settled batch, null for a running one (its page counts them).
   */
  inProgress: number | null;
};

export type RedriveBatchProgress = RedriveBatchView & {
  /** Of the redriven: delivered since, dead-lettered again, still on their way. */
  deliveredSince: number;
  failedAgain: number;
  inProgress: number;
  skippedBy: { notDeadLettered: number; subscriptionInactive: number; superseded: number };
  /** Every skipped item by its recorded outcome (e.g. skipped_in_progress, skipped_exists), for every kind. */
  skippedByOutcome: Record<string, number>;
  /** Seconds until every item is handled at the batch's rate (running batches only). */
  etaSeconds: number | null;
};

/** A redrive_batches row as Prisma reads it. */
export function toBatchView(b: RedriveBatch): RedriveBatchView {
  return {
    id: b.id,
    kind: b.kind as BatchKind,
    status: b.status as BatchStatus,
    filter: b.filter as TRedriveFilter | BatchWindowFilter,
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
    settledAt: b.settledAt ? b.settledAt.toISOString() : null,
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
  const scope = scopeOf(principal);
  return prisma.$transaction(
    async (tx) => {
      const sub = await checkFilterSubscription(tx, filter, scope);
      // The batch's tenant: the scoped principal's, or the one subscription's it is limited to; else global.
      const tenantId = scope.tenantId ?? sub?.tenant ?? null;
      const batch = await tx.redriveBatch.create({
        data: {
          filter: filter as object,
          reason: input.reason,
          actor: principal.actor,
          ratePerSecond: input.ratePerSecond,
          latestStateWins: input.latestStateWins,
          tenantId,
        },
      });
      const matched = await snapshotRedriveItems(tx, batch.id, filter, scope);
      if (matched === 0)
        throw new AppError(
          "conflict",
          "No dead-lettered delivery on an active subscription matches this filter; nothing to redrive. Preview with dryRun to see what matches.",
          { filter },
        );
      // Pacing starts now, in database time (the pacers' clock): the first
      // items move one tick from now, not in a burst.
      await tx.$executeRaw`UPDATE redrive_batches SET matched = ${matched}::int, paced_until = clock_timestamp() WHERE id = ${batch.id}`;
      const updated = await tx.redriveBatch.findUniqueOrThrow({ where: { id: batch.id } });
      await writeAudit(tx, {
        actor: principal.actor,
        action: "redrive.create",
        targetType: "redrive_batch",
        targetId: batch.id,
        reason: input.reason,
        details: { filter, count: matched, ratePerSecond: input.ratePerSecond, latestStateWins: input.latestStateWins },
        tenantId,
      });
      await tx.$executeRaw`SELECT pg_notify(${REDRIVES_CHANNEL}, ${batch.id})`;
      return toBatchView(updated);
    },
    { timeout: 60_000 },
  );
}

/** The batch's tenant condition: a scoped caller sees its tenant's batches only (another tenant's: 404). */
function batchWhere(scope: Scope): Prisma.RedriveBatchWhereInput {
  if (scope.tenantId === null) return {};
  // A portal for one subscription: the batches whose filter names it.
  return scope.subscriptionId ? { tenantId: scope.tenantId, filter: { path: ["subscriptionId"], equals: scope.subscriptionId } } : { tenantId: scope.tenantId };
}

export async function getRedriveBatch(prisma: PrismaClient, id: string, scope: Scope = GLOBAL_SCOPE): Promise<RedriveBatchProgress> {
  const b = await prisma.redriveBatch.findFirst({ where: { id, ...batchWhere(scope) } });
  if (!b) throw notFound("Redrive batch", id);
  const c = await countBatchProgress(ledgerDb(), id);
  const view = toBatchView(b);
  return {
    ...view,
    deliveredSince: c.delivered,
    failedAgain: c.failed,
    inProgress: c.inProgress,
    skippedBy: {
      notDeadLettered: c.skipped.skipped_not_dead_lettered ?? 0,
      subscriptionInactive: c.skipped.skipped_subscription_inactive ?? 0,
      superseded: c.skipped.skipped_superseded ?? 0,
    },
    skippedByOutcome: c.skipped,
    etaSeconds: b.status === "running" ? Math.ceil(view.remaining / b.ratePerSecond) : null,
  };
}

const BAD_CURSOR = "not a nextCursor or prevCursor this list answered; start again without cursor";

// The cursor is opaque to callers: ["rdb", "a" (the batches older than) or "b" (newer than), created_at as Postgres
// prints it, id]. created_at travels as text (microseconds) and is cast back: a JavaScript Date would round it to the
// millisecond, and batches created within one millisecond would then be skipped or repeated.
type Direction = "a" | "b";
const encodeCursor = (dir: Direction, at: string, id: string) => encodePageCursor(["rdb", dir, at, id]);

function decodeCursor(cursor: string): { dir: Direction; at: string; id: string } {
  const p = decodePageCursor(cursor, BAD_CURSOR);
  if (p.length !== 4 || p[0] !== "rdb" || (p[1] !== "a" && p[1] !== "b") || typeof p[3] !== "string" || p[3].length > 200) throw badPageCursor(BAD_CURSOR);
  // The time must parse here rather than fail as a 500 inside the statement.
  if (typeof p[2] !== "string" || !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2})?|Z)?$/.test(p[2])) throw badPageCursor(BAD_CURSOR);
  return { dir: p[1], at: p[2], id: p[3] };
}

/** A page of batches and the cursors next to it: `nextCursor` null on the last (oldest) page, `prevCursor` null on the first. */
export type RedriveBatchPage = { items: RedriveBatchListItem[]; nextCursor: string | null; prevCursor: string | null };

/**
 * GET /api/v1/redrives and the Redrives page: one page of batches, newest first (by created_at, then id), of one
 * status or kind if asked. Keyset paging, so a page never repeats or skips a batch whatever was started meanwhile. A
 * scoped caller's pages hold its tenant's batches only, whatever the cursor says. A "before" cursor (a page's
 * prevCursor) reads the newer batches in the reverse order and turns them round.
 */
export async function listRedriveBatchPage(prisma: PrismaClient, input: TListRedrives = {}, scope: Scope = GLOBAL_SCOPE): Promise<RedriveBatchPage> {
  const o = ZListRedrives.parse(input);
  const at = o.cursor ? decodeCursor(o.cursor) : null;
  const back = at?.dir === "b";
  // The same conditions as batchWhere, in SQL: its tenant, and for a portal opened for one subscription, that one.
  const where: Prisma.Sql[] = [Prisma.sql`true`];
  if (scope.tenantId !== null) where.push(Prisma.sql`tenant_id = ${scope.tenantId}`);
  if (scope.tenantId !== null && scope.subscriptionId) where.push(Prisma.sql`filter->>'subscriptionId' = ${scope.subscriptionId}`);
  if (o.status) where.push(Prisma.sql`status = ${o.status}`);
  if (o.kind) where.push(Prisma.sql`kind = ${o.kind}`);
  if (at) where.push(back ? Prisma.sql`(created_at, id) > (${at.at}::timestamptz, ${at.id})` : Prisma.sql`(created_at, id) < (${at.at}::timestamptz, ${at.id})`);
  const rows = await prisma.$queryRaw<{ id: string; at: string }[]>`
    SELECT id, created_at::text AS at FROM redrive_batches WHERE ${Prisma.join(where, " AND ")}
     ORDER BY ${back ? Prisma.sql`created_at ASC, id ASC` : Prisma.sql`created_at DESC, id DESC`} LIMIT ${o.limit + 1}`;
  const more = rows.length > o.limit;
  const page = rows.slice(0, o.limit);
  if (back) page.reverse();
  // The full rows by primary key, in scope again.
  const found = await prisma.redriveBatch.findMany({ where: { id: { in: page.map((r) => r.id) }, ...batchWhere(scope) } });
  // What is still on its way, counted for the done and cancelled batches the pacer has not settled yet only (a cancel
  // stops the pacer, not the deliveries it already moved): counting it for every listed batch would join each one's
  // items (up to 50,000) to deliveries on every poll.
  const inProgress = await countInProgress(
    ledgerDb(),
    found.filter((b) => isFinishedBatch(b.status) && !b.settledAt).map((b) => b.id),
  );
  const full = new Map(
    found.map((b): [string, RedriveBatchListItem] => [b.id, { ...toBatchView(b), inProgress: isFinishedBatch(b.status) ? (inProgress.get(b.id) ?? 0) : null }]),
  );
  // An empty page (a cursor past the end) has no batch to stand next to: no cursors.
  const first = page[0];
  const last = page[page.length - 1];
  return {
    items: page.flatMap((r) => (full.has(r.id) ? [full.get(r.id)!] : [])),
    // Read forwards, there is an older page when the statement found one row more; read backwards, the page it came from.
    nextCursor: last && (back || more) ? encodeCursor("a", last.at, last.id) : null,
    prevCursor: first && (back ? more : at !== null) ? encodeCursor("b", first.at, first.id) : null,
  };
}

/** Stops a running batch where it is: items not yet reached stay dead-lettered. */
export async function cancelRedriveBatch(prisma: PrismaClient, opts: { id: string; principal: Principal; reason?: string }): Promise<RedriveBatchView> {
  const scope = scopeOf(opts.principal);
  return prisma.$transaction(async (tx) => {
    // Another tenant's batch is not found for a scoped principal: checked before anything is written.
    if (!(await tx.redriveBatch.findFirst({ where: { id: opts.id, ...batchWhere(scope) }, select: { id: true } }))) throw notFound("Redrive batch", opts.id);
    // Waits for a pacer step in progress (it holds the row), so the counts below are final.
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE redrive_batches SET status = 'cancelled', cancelled_by = ${opts.principal.actor}, finished_at = now(), updated_at = now()
       WHERE id = ${opts.id} AND status = 'running' RETURNING id`;
    const b = await tx.redriveBatch.findUnique({ where: { id: opts.id } });
    if (!b) throw notFound("Redrive batch", opts.id);
    if (rows.length === 0)
      throw new AppError("conflict", `Redrive batch ${opts.id} is already ${b.status}; only a running batch can be cancelled.`, { status: b.status });
    await writeAudit(tx, {
      actor: opts.principal.actor,
      action: "redrive.cancel",
      targetType: "redrive_batch",
      targetId: b.id,
      reason: opts.reason ?? null,
      details: { matched: b.matched, redriven: b.redriven, skipped: b.skipped, remaining: b.matched - b.position, batchReason: b.reason },
      tenantId: b.tenantId,
    });
    return toBatchView(b);
  });
}
