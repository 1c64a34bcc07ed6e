// Secret rotation (Standard Webhooks): a new secret is added; the old ones keep
// signing until `expires_at`, so receivers can switch over during the overlap
// (the worker sends one signature per unexpired secret). Audited in the same
// transaction. The new secret is returned once; listings never show secrets.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import { notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { generateSecret, isValidSecret, sealSecret } from "./secrets";

/** Default overlap 24 h (Svix keeps the old secret valid for 24 hours); at most 7 days. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;

export const ZRotateSecret = z
  .object({
    secret: z.string().refine(isValidSecret, "a secret is whsec_ followed by base64 of 16–64 bytes").optional(),
    overlapSeconds: z.number().int().min(0).max(7 * 86400).optional(),
    reason: z.string().trim().max(500).optional(),
  })
  .strict();
export type TRotateSecret = z.infer<typeof ZRotateSecret>;

export type SecretMeta = { id: string; createdAt: string; expiresAt: string | null; active: boolean };

function meta(s: { id: string; createdAt: Date; expiresAt: Date | null }, now = new Date()): SecretMeta {
  return { id: s.id, createdAt: s.createdAt.toISOString(), expiresAt: s.expiresAt?.toISOString() ?? null, active: !s.expiresAt || s.expiresAt > now };
}

export async function listSecrets(prisma: PrismaClient, subscriptionId: string): Promise<SecretMeta[]> {
  const sub = await prisma.subscription.findUnique({ where: { id: subscriptionId }, select: { id: true } });
  if (!sub) throw notFound("Subscription", subscriptionId);
  const rows = await prisma.subscriptionSecret.findMany({ where: { subscriptionId }, orderBy: { createdAt: "desc" } });
  return rows.map((r) => meta(r));
}

export async function rotateSecret(
  prisma: PrismaClient,
  subscriptionId: string,
  input: TRotateSecret,
  principal: Principal,
): Promise<{ id: string; subscriptionId: string; secret: string; createdAt: string; overlapSeconds: number; previous: SecretMeta[] }> {
  const overlap = input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
  const secret = input.secret ?? generateSecret();
  return prisma.$transaction(async (tx) => {
    // One rotation at a time per subscription.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM subscriptions WHERE id = ${subscriptionId} FOR UPDATE`;
    if (locked.length === 0) throw notFound("Subscription", subscriptionId);
    const now = new Date();
    const retireAt = new Date(now.getTime() + overlap * 1000);
    // Secrets already past their window are useless ciphertext: drop them.
    await tx.subscriptionSecret.deleteMany({ where: { subscriptionId, expiresAt: { lte: now } } });
    const active = await tx.subscriptionSecret.findMany({ where: { subscriptionId } });
    const previous: SecretMeta[] = [];
    for (const s of active) {
      const expiresAt = s.expiresAt && s.expiresAt < retireAt ? s.expiresAt : retireAt;
      await tx.subscriptionSecret.update({ where: { id: s.id }, data: { expiresAt } });
      previous.push(meta({ ...s, expiresAt }, now));
    }
    const id = `sec_${randomBytes(8).toString("hex")}`;
    const created = await tx.subscriptionSecret.create({ data: { id, subscriptionId, secret: sealSecret(secret) } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.secret.rotate",
      targetType: "subscription",
      targetId: subscriptionId,
      reason: input.reason ?? null,
      // Ids and times only: a secret never enters the audit log.
      details: { secretId: id, overlapSeconds: overlap, retiring: previous.map((p) => ({ id: p.id, expiresAt: p.expiresAt })), supplied: Boolean(input.secret) },
    });
    return { id, subscriptionId, secret, createdAt: created.createdAt.toISOString(), overlapSeconds: overlap, previous };
  });
}
