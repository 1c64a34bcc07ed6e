// Recover and backfill (docs/DESIGN.md invariant 9): a subscription's window
// sent again, or its past events delivered for the first time, as a persisted,
// paced, cancellable batch on the bulk-redrive machinery (redrive_batches with
// kind recover or backfill; the worker's pacer steps them like any batch).
// Each use case checks, previews or creates; a creation's batch, items and
// audit row commit together (docs/STYLE.md), so a refused request writes
// nothing. The statements on the ledger are lib/ledger/sql/recover.ts and
// backfill.ts.
import "server-only";
import type { PrismaClient, Tx } from "../db/prisma";
import { ledgerDb } from "../ledger/read/db";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { REDRIVES_CHANNEL } from "../redrive/sql";
import { inactiveSubscriptionMessage, SAMPLE_SIZE, toBatchView, type BatchWindowFilter, type RedriveBatchView } from "../redrive/redrive-batches";
import {
  countRecoverMatches,
  sampleRecoverMatches,
  snapshotRecoverItems,
  RECOVER_DEFAULT_STATES,
  type RecoverableState,
  type RecoverWindow,
} from "../ledger/sql/recover";
import { countBackfillMatches, sampleBackfillMatches, snapshotBackfillItems, type BackfillWindow } from "../ledger/sql/backfill";
import type { TBackfill, TRecover } from "../redrive/redrive-input";
import type { RecoverSample } from "../ledger/read/types";
import { GLOBAL_SCOPE, scopeOf, subscriptionWhere, type Scope } from "../tenants/scope";

type Sub = { id: string; name: string; tenant: string | null; state: string; stateReason: string | null; archivedAt: Date | null };

/**
 * The subscription, which must exist in `scope` (404: another tenant's is not revealed) and be active (409: a paused,
 * disabled or archived one would only hold or refuse what the batch sends). A backfill then matches events by the
 * subscription's own tenant, and a recover its own deliveries, so a batch never reaches past it.
 */
async function activeSubscription(db: Tx | PrismaClient, id: string, what: "recover" | "backfill", scope: Scope): Promise<Sub> {
  const sub = await db.subscription.findFirst({
    where: { id, ...subscriptionWhere(scope) },
    select: { id: true, name: true, tenant: true, state: true, stateReason: true, archivedAt: true },
  });
  if (!sub) throw notFound("Subscription", id);
  if (sub.archivedAt)
    throw new AppError(
      "conflict",
      `Subscription ${sub.id} (${sub.name}) is archived (since ${sub.archivedAt.toISOString()}): it receives nothing. Unarchive it first (POST /api/v1/subscriptions/${sub.id}/unarchive), then ${what}.`,
      { subscriptionId: sub.id, archivedAt: sub.archivedAt.toISOString() },
    );
  if (sub.state === "active") return sub;
  const message =
    sub.state === "paused" || sub.state === "disabled"
      ? inactiveSubscriptionMessage(sub)
          .replace(/a redrive/g, `a ${what}`)
          .replace(/then redrive/g, `then ${what}`)
      : `Subscription ${sub.id} (${sub.name}) is ${sub.state}${sub.stateReason ? ` (${sub.stateReason})` : ""}; only an active subscription can be sent a ${what}. Make it active first.`;
  throw new AppError("conflict", message, { subscriptionId: sub.id, subscriptionState: sub.state });
}

/** The window with `until` resolved to a time (now, in the server's clock, when left out). */
function resolveWindow(v: { since: string; until?: string }): { since: string; until: string } {
  return { since: new Date(v.since).toISOString(), until: new Date(v.until ?? Date.now()).toISOString() };
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export type RecoverPreview = {
  kind: "recover";
  subscriptionId: string;
  since: string;
  until: string;
  states: RecoverableState[];
  matched: number;
  byState: Record<string, number>;
  oldestCreatedAt: string | null;
  newestCreatedAt: string | null;
  sample: RecoverSample[];
};

function recoverWindow(subscriptionId: string, input: Pick<TRecover, "since" | "until" | "states">): RecoverWindow {
  return { subscriptionId, ...resolveWindow(input), states: input.states ?? [...RECOVER_DEFAULT_STATES] };
}

/** What a recover would send: the exact count by state and the oldest few. */
export async function previewRecover(
  prisma: PrismaClient,
  subscriptionId: string,
  input: Pick<TRecover, "since" | "until" | "states">,
  scope: Scope = GLOBAL_SCOPE,
): Promise<RecoverPreview> {
  await activeSubscription(prisma, subscriptionId, "recover", scope);
  const w = recoverWindow(subscriptionId, input);
  const [agg, sample] = await Promise.all([countRecoverMatches(ledgerDb(), w), sampleRecoverMatches(ledgerDb(), w, SAMPLE_SIZE)]);
  return {
    kind: "recover",
    subscriptionId,
    since: w.since,
    until: w.until,
    states: [...w.states],
    matched: agg.matched,
    byState: agg.byState,
    oldestCreatedAt: iso(agg.oldest),
    newestCreatedAt: iso(agg.newest),
    sample,
  };
}

export type BackfillPreview = {
  kind: "backfill";
  subscriptionId: string;
  since: string;
  until: string;
  matched: number;
  oldestReceivedAt: string | null;
  newestReceivedAt: string | null;
  sample: { eventId: string; eventType: string; occurredAt: string; receivedAt: string }[];
};

/** What a backfill would create: the events received in the window that match and have no delivery for the subscription yet. */
export async function previewBackfill(
  prisma: PrismaClient,
  subscriptionId: string,
  input: Pick<TBackfill, "since" | "until">,
  scope: Scope = GLOBAL_SCOPE,
): Promise<BackfillPreview> {
  await activeSubscription(prisma, subscriptionId, "backfill", scope);
  const w: BackfillWindow = { subscriptionId, ...resolveWindow(input) };
  const [agg, sample] = await Promise.all([countBackfillMatches(ledgerDb(), w), sampleBackfillMatches(ledgerDb(), w, SAMPLE_SIZE)]);
  return {
    kind: "backfill",
    subscriptionId,
    since: w.since,
    until: w.until,
    matched: agg.matched,
    oldestReceivedAt: iso(agg.oldest),
    newestReceivedAt: iso(agg.newest),
    sample: sample.map((r) => ({ ...r, occurredAt: iso(r.occurredAt)!, receivedAt: iso(r.receivedAt)! })),
  };
}

/**
 * Creates the batch row, snapshots its items, and commits them with the
 * audit row; the pacer takes it from there. Nothing matched is a 409 (and
 * nothing written): a second backfill of the same window lands here.
 */
async function createBatch(
  prisma: PrismaClient,
  kind: "recover" | "backfill",
  subscriptionId: string,
  filter: BatchWindowFilter,
  input: { reason: string; ratePerSecond: number },
  principal: Principal,
  snapshot: (tx: Tx, batchId: string) => Promise<number>,
  nothing: string,
): Promise<RedriveBatchView> {
  return prisma.$transaction(
    async (tx) => {
      const sub = await activeSubscription(tx, subscriptionId, kind, scopeOf(principal));
      const batch = await tx.redriveBatch.create({
        // The batch belongs to its subscription's tenant, so that tenant's principals see it and no other scoped one does.
        data: { kind, filter: filter as object, reason: input.reason, actor: principal.actor, ratePerSecond: input.ratePerSecond, tenantId: sub.tenant },
      });
      const matched = await snapshot(tx, batch.id);
      if (matched === 0) throw new AppError("conflict", nothing, { filter });
      // Pacing starts now, in database time (the pacers' clock), not in a burst.
      await tx.$executeRaw`UPDATE redrive_batches SET matched = ${matched}::int, paced_until = clock_timestamp() WHERE id = ${batch.id}`;
      const updated = await tx.redriveBatch.findUniqueOrThrow({ where: { id: batch.id } });
      await writeAudit(tx, {
        actor: principal.actor,
        action: kind === "recover" ? "recover.create" : "backfill.create",
        targetType: "redrive_batch",
        targetId: batch.id,
        reason: input.reason,
        details: {
          subscriptionId,
          since: filter.since,
          until: filter.until,
          ...(filter.states ? { states: filter.states } : {}),
          count: matched,
          ratePerSecond: input.ratePerSecond,
        },
      });
      await tx.$executeRaw`SELECT pg_notify(${REDRIVES_CHANNEL}, ${batch.id})`;
      return toBatchView(updated);
    },
    { timeout: 60_000 },
  );
}

/** A recover: every delivery of the subscription created in the window, in the given states, sent again at `ratePerSecond`. */
export async function createRecoverBatch(
  prisma: PrismaClient,
  subscriptionId: string,
  input: Omit<TRecover, "dryRun" | "reason"> & { reason: string },
  principal: Principal,
): Promise<RedriveBatchView> {
  const w = recoverWindow(subscriptionId, input);
  return createBatch(
    prisma,
    "recover",
    subscriptionId,
    { subscriptionId, since: w.since, until: w.until, states: [...w.states] },
    input,
    principal,
    (tx, id) => snapshotRecoverItems(tx, id, w),
    `No delivery of subscription ${subscriptionId} in state ${w.states.join(", ")} was created between ${w.since} and ${w.until}; nothing to recover. Preview with dryRun to see what a window holds.`,
  );
}

/** A backfill: deliveries created for the window's matching events that have none for the subscription, at `ratePerSecond`. */
export async function createBackfillBatch(
  prisma: PrismaClient,
  subscriptionId: string,
  input: Omit<TBackfill, "dryRun" | "reason"> & { reason: string },
  principal: Principal,
): Promise<RedriveBatchView> {
  const w: BackfillWindow = { subscriptionId, ...resolveWindow(input) };
  return createBatch(
    prisma,
    "backfill",
    subscriptionId,
    { subscriptionId, since: w.since, until: w.until },
    input,
    principal,
    (tx, id) => snapshotBackfillItems(tx, id, w),
    `Every event received between ${w.since} and ${w.until} that subscription ${subscriptionId} receives already has a delivery for it; nothing to backfill.`,
  );
}
