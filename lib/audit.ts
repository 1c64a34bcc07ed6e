import type { Tx } from "./db/prisma";

/** Invariant 7: an audit row written in the same transaction as the change it records. */
export async function writeAudit(
  tx: Tx,
  entry: { actor: string; action: string; targetType: string; targetId: string; reason?: string | null; details?: Record<string, unknown> },
) {
  await tx.auditEntry.create({
    data: {
      actor: entry.actor,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      reason: entry.reason ?? null,
      details: (entry.details ?? {}) as object,
    },
  });
}
