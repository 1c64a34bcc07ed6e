// Secret rotation (Standard Webhooks): a new secret is added; the old ones keep
// signing until `expires_at`, so receivers can switch over during the overlap
// (the worker sends one signature per unexpired secret). Audited in the same
// transaction. The new secret is returned once; listings never show secrets.
import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { publishOpsEvent } from "../ledger/sql/archive";
import { generateSecret, isValidSecret, sealSecret } from "./secrets";
import type { OpsEventType } from "../ops-events/types";

/**
 * The operational event a rotation publishes (to subscriptions that name it),
 * so a district's on-call hears that its signing key changed. Ids and times
 * only, never a secret.
 */
export const SECRET_ROTATED_EVENT = "hookledger.subscription.secret_rotated" satisfies OpsEventType;

/**
 * At most this many secrets sign at once (the new one included): the worker
 * computes one HMAC per unexpired secret on every send, so back-to-back
 * rotations with long overlaps must not pile them up. A rotation past the cap
 * ends the oldest overlaps now, audited as an early end.
 */
const MAX_ACTIVE_SECRETS = 5;

/** Default overlap 24 h (Svix keeps the old secret valid for 24 hours); at most 7 days. */
const DEFAULT_OVERLAP_SECONDS = 24 * 3600;

export const ZRotateSecret = z
  .object({
    secret: z.string().refine(isValidSecret, "a secret is whsec_ followed by base64 of 16–64 bytes").optional(),
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86400)
      .optional(),
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
    // One rotation at a time per subscription. FOR NO KEY UPDATE, not FOR UPDATE, so a rotation does not wait for the
    // producers publishing to it (Row locks, lib/ledger/sql/subscription-state.ts).
    type Locked = { id: string; name: string; tenant: string | null };
    const locked = await tx.$queryRaw<Locked[]>`SELECT id, name, tenant FROM subscriptions WHERE id = ${subscriptionId} FOR NO KEY UPDATE`;
    if (locked.length === 0) throw notFound("Subscription", subscriptionId);
    const now = new Date();
    const retireAt = new Date(now.getTime() + overlap * 1000);
    // Secrets already past their window are useless ciphertext: drop them.
    await tx.subscriptionSecret.deleteMany({ where: { subscriptionId, expiresAt: { lte: now } } });
    const active = await tx.subscriptionSecret.findMany({ where: { subscriptionId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    // The oldest beyond the cap (counting the new secret) stop signing now.
    const overCap = Math.max(0, active.length + 1 - MAX_ACTIVE_SECRETS);
    const previous: SecretMeta[] = [];
    const endedEarly: { secretId: string; expiresAtBefore: string | null; expiresAt: string }[] = [];
    for (const [i, s] of active.entries()) {
      const ended = i < overCap;
      const expiresAt = ended ? now : s.expiresAt && s.expiresAt < retireAt ? s.expiresAt : retireAt;
      await tx.subscriptionSecret.update({ where: { id: s.id }, data: { expiresAt } });
      previous.push(meta({ ...s, expiresAt }, now));
      if (ended) endedEarly.push({ secretId: s.id, expiresAtBefore: s.expiresAt?.toISOString() ?? null, expiresAt: now.toISOString() });
    }
    previous.reverse(); // newest first, as listings show them
    const id = `sec_${randomBytes(8).toString("hex")}`;
    const created = await tx.subscriptionSecret.create({ data: { id, subscriptionId, secret: sealSecret(secret, { id, subscriptionId }) } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.secret.rotate",
      targetType: "subscription",
      targetId: subscriptionId,
      reason: input.reason ?? null,
      // Ids and times only: a secret never enters the audit log.
      details: {
        secretId: id,
        overlapSeconds: overlap,
        retiring: previous.map((p) => ({ id: p.id, expiresAt: p.expiresAt })),
        supplied: Boolean(input.secret),
        ...(endedEarly.length ? { endedEarly: endedEarly.map((e) => e.secretId), maxActiveSecrets: MAX_ACTIVE_SECRETS } : {}),
      },
    });
    // Each overlap the cap ended is audited as the early end it is, like DELETE …/secrets/:secretId.
    for (const e of endedEarly)
      await writeAudit(tx, {
        actor: principal.actor,
        action: "subscription.secret.expire",
        targetType: "subscription",
        targetId: subscriptionId,
        reason: `rotation ${id} is past the limit of ${MAX_ACTIVE_SECRETS} signing secrets`,
        details: { ...e, cause: "max_active_secrets", rotation: id },
      });
    await publishOpsEvent(tx, {
      type: SECRET_ROTATED_EVENT,
      tenant: locked[0].tenant,
      subject: { subscriptionId },
      data: {
        subscriptionId,
        subscriptionName: locked[0].name,
        secretId: id,
        rotatedAt: created.createdAt.toISOString(),
        overlapSeconds: overlap,
        previous: previous.map((p) => ({ id: p.id, expiresAt: p.expiresAt })),
        actor: principal.actor,
      },
    });
    return { id, subscriptionId, secret, createdAt: created.createdAt.toISOString(), overlapSeconds: overlap, previous };
  });
}

/**
 * Ends a rotation's overlap early: the old secret stops signing now. The
 * newest secret cannot be ended (the subscription would have none to sign
 * with: rotate instead), nor one already past its expiry (409).
 */
export async function expireSecret(prisma: PrismaClient, subscriptionId: string, secretId: string, principal: Principal): Promise<SecretMeta> {
  return prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM subscriptions WHERE id = ${subscriptionId} FOR NO KEY UPDATE`;
    if (locked.length === 0) throw notFound("Subscription", subscriptionId);
    const all = await tx.subscriptionSecret.findMany({ where: { subscriptionId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    const s = all.find((x) => x.id === secretId);
    if (!s) throw notFound("Secret", `${secretId} of subscription ${subscriptionId}`);
    const now = new Date();
    if (s.expiresAt && s.expiresAt <= now) throw new AppError("conflict", `Secret ${secretId} already stopped signing at ${s.expiresAt.toISOString()}.`);
    if (all[0].id === secretId)
      throw new AppError("conflict", `Secret ${secretId} is the newest one, the one deliveries are signed with; rotate to a new secret instead of ending it.`);
    const after = await tx.subscriptionSecret.update({ where: { id: secretId }, data: { expiresAt: now } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.secret.expire",
      targetType: "subscription",
      targetId: subscriptionId,
      details: { secretId, expiresAtBefore: s.expiresAt?.toISOString() ?? null, expiresAt: now.toISOString() },
    });
    return meta(after, new Date(now.getTime() + 1));
  });
}
