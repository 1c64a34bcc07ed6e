// Archive and unarchive (docs/DESIGN.md, Archived subscriptions): an operator
// retires an endpoint without deleting anything. One transaction locks the
// subscription row, records who archived it and why, resolves its queued
// deliveries as `superseded` (lib/ledger/sql/archive.ts) and writes the audit
// row, so a refused or failed archive changes nothing.
import "server-only";
import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { DELIVERIES_CHANNEL } from "../ledger/notify";
import { countInFlight, supersedeQueuedDeliveries } from "../ledger/sql/archive";
import { toSubscriptionView, type SubscriptionView } from "./manage-subscriptions";

export const ZArchiveSubscription = z.object({ reason: z.string().trim().min(3, "say why, in at least 3 characters").max(500) }).strict();
export type TArchiveSubscription = z.infer<typeof ZArchiveSubscription>;

export type ArchiveResult = SubscriptionView & { superseded: number; inFlight: number };

export async function archiveSubscription(prisma: PrismaClient, id: string, input: TArchiveSubscription, principal: Principal): Promise<ArchiveResult> {
  return prisma.$transaction(async (tx) => {
    // FOR UPDATE (not the UPDATE's weaker lock) also waits for an enqueue or a
    // backfill that has already inserted deliveries for this subscription to
    // commit (each holds KEY SHARE on the row: migration 0024), so the supersede below sees them.
    const [row] = await tx.$queryRaw<{ archived_at: Date | null; state: string }[]>`SELECT archived_at, state FROM subscriptions WHERE id = ${id} FOR UPDATE`;
    if (!row) throw notFound("Subscription", id);
    if (row.archived_at)
      throw new AppError("conflict", `Subscription ${id} is already archived (since ${row.archived_at.toISOString()}); unarchive it first to change anything.`, {
        archivedAt: row.archived_at.toISOString(),
      });
    const sub = await tx.subscription.update({
      where: { id },
      data: { archivedAt: new Date(), archiveReason: input.reason, archivedBy: principal.actor, updatedAt: new Date() },
    });
    const superseded = await supersedeQueuedDeliveries(tx, id, { actor: principal.actor, reason: input.reason });
    const inFlight = await countInFlight(tx, id);
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.archive",
      targetType: "subscription",
      targetId: id,
      reason: input.reason,
      details: { superseded, inFlight, previousState: row.state },
    });
    return { ...toSubscriptionView(sub), superseded, inFlight };
  });
}

export async function unarchiveSubscription(prisma: PrismaClient, id: string, input: TArchiveSubscription, principal: Principal): Promise<SubscriptionView> {
  return prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ archived_at: Date | null; archived_by: string | null; archive_reason: string | null }[]>`
      SELECT archived_at, archived_by, archive_reason FROM subscriptions WHERE id = ${id} FOR UPDATE`;
    if (!row) throw notFound("Subscription", id);
    if (!row.archived_at) throw new AppError("conflict", `Subscription ${id} is not archived; there is nothing to unarchive.`);
    const sub = await tx.subscription.update({ where: { id }, data: { archivedAt: null, archiveReason: null, archivedBy: null, updatedAt: new Date() } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.unarchive",
      targetType: "subscription",
      targetId: id,
      reason: input.reason,
      details: { archivedAt: row.archived_at.toISOString(), archivedBy: row.archived_by ?? "", archiveReason: row.archive_reason ?? "" },
    });
    // Anything held while it was archived (a retry of a delivery that was in flight then) flows again.
    await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${id})`;
    return toSubscriptionView(sub);
  });
}
