// Resolve and resend use cases, one function each: resolveDelivery,
// previewResolve, resolveDeadLetters (bulk), resendDelivery. Each mutation
// writes its audit rows in the same transaction as the change (docs/STYLE.md
// #10), and every refusal (404, 409) throws before anything is written, so a
// 4xx leaves neither a change nor an audit row. The statements on the ledger
// are lib/ledger's (sql/resolve.ts, sql/resend.ts).
import "server-only";
import { randomBytes } from "node:crypto";
import type { PrismaClient, Tx } from "../db/prisma";
import { ledgerDb } from "../ledger/read/db";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { toDeliveryView } from "../deliveries/queries";
import type { DeliveryView } from "../api/views";
import type { DeadLetterSample } from "../ledger/read/types";
import { DELIVERIES_CHANNEL } from "../ledger/notify";
import { getDelivery } from "../ledger/sql/get-delivery";
import { countResolveMatches, findResolveMatchIds, RESOLVE_CHUNK, resolveDeliveries, sampleResolveMatches } from "../ledger/sql/resolve";
import { resendDelivery as resendRow } from "../ledger/sql/resend";
import { findEventInScope } from "../ledger/sql/lookup-events";
import { RESENDABLE_STATES, RESOLVABLE_STATES, type Resolution } from "../ledger/states";
import { ZRedriveFilter, type TRedriveFilter } from "../redrive/redrive-input";
import { inactiveSubscriptionMessage, speaksToDistrict } from "../redrive/redrive-batches";
import { GLOBAL_SCOPE, scopeOf, subscriptionWhere, type Scope } from "../tenants/scope";

const SAMPLE_SIZE = 10;

function wrongState(id: string, state: string, verb: "resolved" | "resent", allowed: readonly string[]): AppError {
  const hint =
    verb === "resolved"
      ? state === "resolved"
        ? " It is already resolved; redrive it to reopen it."
        : " Only a dead letter can be resolved."
      : state === "dead_letter"
        ? " A dead letter is redriven, not resent (POST /api/v1/deliveries/:id/redrive)."
        : " It has not been delivered yet; it is still on its way.";
  return new AppError("conflict", `Delivery ${id} is ${state}; it can be ${verb} only when ${allowed.join(" or ")}.${hint}`, {
    state,
    allowedStates: allowed,
  });
}

/**
 * A fixed_at_source decision's corrected event: another event, one the caller may see (another tenant's is answered
 * like a missing one), of the same district as the dead letter's event, so each timeline that shows the link is one
 * its viewers may read. 400 otherwise, before anything is written.
 */
async function checkCorrectedEvent(tx: Tx, d: { eventId: string }, correctedEventId: string, scope: Scope): Promise<void> {
  if (correctedEventId === d.eventId)
    throw new AppError("bad_request", `correctedEventId: ${correctedEventId} is this delivery's own event; name the event that carried the corrected data.`);
  const [corrected, original] = await Promise.all([findEventInScope(tx, correctedEventId, scope), findEventInScope(tx, d.eventId, GLOBAL_SCOPE)]);
  if (!corrected)
    throw new AppError("bad_request", `correctedEventId: no event ${correctedEventId} was found. Publish the corrected event first, then resolve with its id.`, {
      correctedEventId,
    });
  if (original && corrected.tenant !== original.tenant)
    throw new AppError(
      "bad_request",
      `correctedEventId: ${correctedEventId} belongs to ${corrected.tenant ?? "no district"}, this dead letter's event to ${original.tenant ?? "no district"}; a correction is the same district's event.`,
      { correctedEventId },
    );
}

/**
 * Resolves one dead letter with the operator's decision. 404 unknown id, 409 any other state, 400 a corrected event
 * that is not one (checkCorrectedEvent).
 */
export async function resolveDelivery(
  prisma: PrismaClient,
  opts: { id: string; resolution: Resolution; reason: string; principal: Principal; correctedEventId?: string },
): Promise<DeliveryView> {
  return prisma.$transaction(async (tx) => {
    // Another tenant's delivery is not found for a scoped principal (404, nothing written).
    const d = await getDelivery(tx, opts.id, scopeOf(opts.principal));
    if (!d) throw notFound("Delivery", opts.id);
    if (!RESOLVABLE_STATES.includes(d.state as never)) throw wrongState(d.id, d.state, "resolved", RESOLVABLE_STATES);
    if (opts.correctedEventId !== undefined) {
      if (opts.resolution !== "fixed_at_source")
        throw new AppError("bad_request", "correctedEventId names the corrected event of a fixed_at_source resolution; leave it out for other resolutions.");
      await checkCorrectedEvent(tx, d, opts.correctedEventId, scopeOf(opts.principal));
    }
    // The statement writes the delivery's audit row with the move (sql/resolve.ts).
    const moved = await resolveDeliveries(tx, [d.id], {
      resolution: opts.resolution,
      reason: opts.reason,
      actor: opts.principal.actor,
      correctedEventId: opts.correctedEventId ?? null,
    });
    if (moved.length === 0) {
      const now = (await getDelivery(tx, d.id))!;
      throw wrongState(d.id, now.state, "resolved", RESOLVABLE_STATES);
    }
    return toDeliveryView((await getDelivery(tx, d.id))!);
  });
}

export type ResolvePreview = {
  matched: number;
  oldestDeadLetteredAt: string | null;
  newestDeadLetteredAt: string | null;
  sample: DeadLetterSample[];
};

/** The filter's subscription must exist in `scope` (another tenant's is answered like an unknown one). */
async function checkFilterSubscription(tx: Tx | PrismaClient, filter: TRedriveFilter, scope: Scope): Promise<{ tenant: string | null } | null> {
  if (!filter.subscriptionId) return null;
  const sub = await tx.subscription.findFirst({ where: { id: filter.subscriptionId, ...subscriptionWhere(scope) }, select: { tenant: true } });
  if (!sub) {
    // A scoped caller gets the same 404 for another tenant's subscription as for none (existence is not revealed).
    if (scope.tenantId !== null) throw notFound("Subscription", filter.subscriptionId);
    throw new AppError("bad_request", `filter.subscriptionId: subscription ${filter.subscriptionId} does not exist.`);
  }
  return sub;
}

/**
 * What a bulk resolve would move: the exact count and the oldest few, within `scope`. Unlike a redrive, paused and
 * disabled subscriptions' dead letters count.
 */
export async function previewResolve(prisma: PrismaClient, opts: { filter: TRedriveFilter; scope?: Scope }): Promise<ResolvePreview> {
  const filter = ZRedriveFilter.parse(opts.filter);
  const scope = opts.scope ?? GLOBAL_SCOPE;
  await checkFilterSubscription(prisma, filter, scope);
  const [agg, sample] = await Promise.all([countResolveMatches(ledgerDb(), filter, scope), sampleResolveMatches(ledgerDb(), filter, SAMPLE_SIZE, scope)]);
  return {
    matched: agg.matched,
    oldestDeadLetteredAt: agg.oldest ? new Date(agg.oldest).toISOString() : null,
    newestDeadLetteredAt: agg.newest ? new Date(agg.newest).toISOString() : null,
    sample,
  };
}

export type BulkResolveResult = { id: string; resolution: Resolution; resolved: number; filter: TRedriveFilter };

/**
 * Bulk resolve: every dead letter matching the filter, in chunks of one
 * guarded statement each (sql/resolve.ts, 5,000 rows), all in one transaction
 * with one `dlq.resolve` audit row naming the filter and the count, beside the
 * per-delivery rows the statements write. Either all of it commits or none.
 */
export async function resolveDeadLetters(
  prisma: PrismaClient,
  input: { filter: TRedriveFilter; resolution: Resolution; reason: string },
  principal: Principal,
): Promise<BulkResolveResult> {
  const filter = ZRedriveFilter.parse(input.filter ?? {});
  const id = `rsv_${randomBytes(8).toString("hex")}`;
  const scope = scopeOf(principal);
  return prisma.$transaction(
    async (tx) => {
      const sub = await checkFilterSubscription(tx, filter, scope);
      // Confined to the principal's tenant in SQL, whatever the filter says.
      const ids = await findResolveMatchIds(tx, filter, scope);
      const decision = { resolution: input.resolution, reason: input.reason, actor: principal.actor, bulkId: id };
      let resolved = 0;
      for (let i = 0; i < ids.length; i += RESOLVE_CHUNK) resolved += (await resolveDeliveries(tx, ids.slice(i, i + RESOLVE_CHUNK), decision)).length;
      if (resolved === 0) throw new AppError("conflict", "No dead letter matches this filter; nothing to resolve. Preview with dryRun to see what matches.", { filter });
      await writeAudit(tx, {
        actor: principal.actor,
        action: "dlq.resolve",
        targetType: "dlq",
        targetId: id,
        reason: input.reason,
        details: { filter, resolution: input.resolution, count: resolved },
        // The bulk row's tenant: the scoped principal's, or the one subscription's it was limited to.
        tenantId: scope.tenantId ?? sub?.tenant ?? null,
      });
      return { id, resolution: input.resolution, resolved, filter };
    },
    { timeout: 120_000, maxWait: 10_000 },
  );
}

/**
 * Resend: a delivered or resolved delivery due again, same key and bytes, the
 * next attempt recorded as trigger `resend` by the operator. 404 unknown id,
 * 409 any other state or a subscription that is not active.
 */
export async function resendDelivery(prisma: PrismaClient, opts: { id: string; reason: string; principal: Principal }): Promise<DeliveryView> {
  return prisma.$transaction(async (tx) => {
    const d = await getDelivery(tx, opts.id, scopeOf(opts.principal));
    if (!d) throw notFound("Delivery", opts.id);
    if (!RESENDABLE_STATES.includes(d.state as never)) throw wrongState(d.id, d.state, "resent", RESENDABLE_STATES);
    const sub = (await tx.subscription.findUnique({ where: { id: d.subscriptionId }, select: { id: true, name: true, state: true, stateReason: true } }))!;
    if (sub.state !== "active")
      throw new AppError(
        "conflict",
        speaksToDistrict(opts.principal) ? inactiveSubscriptionMessage(sub, { district: true }) : inactiveSubscriptionMessage(sub).replace(/redrive/g, "resend"),
        { subscriptionId: sub.id, subscriptionState: sub.state },
      );
    if (!(await resendRow(tx, d.id, opts.principal.actor))) {
      const now = (await getDelivery(tx, d.id))!;
      throw wrongState(d.id, now.state, "resent", RESENDABLE_STATES);
    }
    await writeAudit(tx, {
      actor: opts.principal.actor,
      action: "delivery.resend",
      targetType: "delivery",
      targetId: d.id,
      reason: opts.reason,
      details: { subscriptionId: d.subscriptionId, eventId: d.eventId, deliveryKey: d.deliveryKey, from: d.state },
    });
    await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${d.subscriptionId})`;
    return toDeliveryView((await getDelivery(tx, d.id))!);
  });
}
