// Archive and unarchive (docs/DESIGN.md, Archived subscriptions): an operator
// retires an endpoint without deleting anything. The change and its audit row
// are the ledger's (lib/ledger/sql/subscription-state.ts), in one transaction
// with reading the view back, so a refused or failed archive changes nothing;
// the deliveries written for it just before it committed are superseded after.
import "server-only";
import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { logger } from "../log";
import type { Principal } from "../auth/principal";
import { archive, supersedeAfterArchive, unarchive } from "../ledger/sql/subscription-state";
import { toSubscriptionView, type SubscriptionView } from "./manage-subscriptions";

export const ZArchiveSubscription = z.object({ reason: z.string().trim().min(3, "say why, in at least 3 characters").max(500) }).strict();
export type TArchiveSubscription = z.infer<typeof ZArchiveSubscription>;

export type ArchiveResult = SubscriptionView & { superseded: number; inFlight: number };

/**
 * Two transactions (Row locks, lib/ledger/sql/subscription-state.ts): the archive with its audit row, which does not
 * wait for the producers publishing to the subscription, then the deliveries those that had already written for it
 * insert, superseded once they commit. `superseded` counts both.
 */
export async function archiveSubscription(prisma: PrismaClient, id: string, input: TArchiveSubscription, principal: Principal): Promise<ArchiveResult> {
  const c = { actor: principal.actor, reason: input.reason };
  const archived = await prisma.$transaction(async (tx) => {
    const r = await archive(tx, id, c);
    if (!r) throw notFound("Subscription", id);
    if ("alreadyArchivedAt" in r)
      throw new AppError("conflict", `Subscription ${id} is already archived (since ${r.alreadyArchivedAt.toISOString()}); unarchive it first to change anything.`, {
        archivedAt: r.alreadyArchivedAt.toISOString(),
      });
    const sub = await tx.subscription.findUniqueOrThrow({ where: { id } });
    return { ...toSubscriptionView(sub), superseded: r.superseded, inFlight: r.inFlight };
  });
  // The archive has committed: a failure here does not undo it, so it is not the caller's error either.
  const late = await prisma
    .$transaction((tx) => supersedeAfterArchive(tx, id, c))
    .catch((err: unknown) => {
      logger.warn({ err, subscription: id }, "archived; deliveries written for it just before are left waiting on it (visible; due again on an unarchive)");
      return 0;
    });
  return { ...archived, superseded: archived.superseded + late };
}

export async function unarchiveSubscription(prisma: PrismaClient, id: string, input: TArchiveSubscription, principal: Principal): Promise<SubscriptionView> {
  return prisma.$transaction(async (tx) => {
    const r = await unarchive(tx, id, { actor: principal.actor, reason: input.reason });
    if (!r) throw notFound("Subscription", id);
    if (r === "not_archived") throw new AppError("conflict", `Subscription ${id} is not archived; there is nothing to unarchive.`);
    return toSubscriptionView(await tx.subscription.findUniqueOrThrow({ where: { id } }));
  });
}
