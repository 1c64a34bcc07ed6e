import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../db/prisma";
import type { Subscription } from "../generated/prisma/client";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { validateTargetUrl } from "../net/target";
import { generateSecret, sealSecret } from "./secrets";
import type { TCreateSubscription, TUpdateSubscription } from "./schema";

export type SubscriptionView = {
  id: string;
  name: string;
  tenant: string | null;
  url: string;
  eventTypes: string[];
  state: string;
  stateReason: string | null;
  retryPolicy: unknown;
  rateLimitPerSecond: number | null;
  maxConcurrency: number;
  createdAt: string;
  updatedAt: string;
};

export function toSubscriptionView(s: Subscription): SubscriptionView {
  return {
    id: s.id,
    name: s.name,
    tenant: s.tenant,
    url: s.url,
    eventTypes: s.eventTypes,
    state: s.state,
    stateReason: s.stateReason,
    retryPolicy: s.retryPolicy,
    rateLimitPerSecond: s.rateLimitPerSecond,
    maxConcurrency: s.maxConcurrency,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export async function createSubscription(
  prisma: PrismaClient,
  input: TCreateSubscription,
  principal: Principal,
): Promise<SubscriptionView & { secret: string }> {
  await validateTargetUrl(input.url);
  const id = input.id ?? `sub_${randomBytes(6).toString("hex")}`;
  const secret = input.secret ?? generateSecret();
  return prisma.$transaction(async (tx) => {
    const exists = await tx.subscription.findUnique({ where: { id }, select: { id: true } });
    if (exists) throw new AppError("conflict", `Subscription ${id} already exists; choose another id or PATCH the existing one.`);
    const sub = await tx.subscription.create({
      data: {
        id,
        name: input.name,
        tenant: input.tenant ?? null,
        url: input.url,
        eventTypes: input.eventTypes,
        retryPolicy: (input.retryPolicy ?? {}) as object,
        rateLimitPerSecond: input.rateLimitPerSecond ?? null,
        maxConcurrency: input.maxConcurrency ?? 10,
        secrets: { create: { id: `sec_${randomBytes(8).toString("hex")}`, secret: sealSecret(secret) } },
      },
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.create",
      targetType: "subscription",
      targetId: id,
      details: { url: input.url, eventTypes: input.eventTypes, tenant: input.tenant ?? null },
    });
    return { ...toSubscriptionView(sub), secret };
  });
}

export async function getSubscription(prisma: PrismaClient, id: string): Promise<SubscriptionView> {
  const sub = await prisma.subscription.findUnique({ where: { id } });
  if (!sub) throw notFound("Subscription", id);
  return toSubscriptionView(sub);
}

export async function listSubscriptions(prisma: PrismaClient, opts: { tenant?: string } = {}): Promise<SubscriptionView[]> {
  const subs = await prisma.subscription.findMany({
    where: opts.tenant ? { tenant: opts.tenant } : {},
    orderBy: [{ tenant: "asc" }, { name: "asc" }],
  });
  return subs.map(toSubscriptionView);
}

/**
 * Updates configuration and/or pauses or resumes. Pause and resume are audited
 * as their own actions; a disabled subscription (410 Gone) can be reactivated
 * only deliberately, with state "active".
 */
export async function updateSubscription(
  prisma: PrismaClient,
  id: string,
  input: TUpdateSubscription,
  principal: Principal,
): Promise<SubscriptionView> {
  if (input.url) await validateTargetUrl(input.url);
  return prisma.$transaction(async (tx) => {
    const before = await tx.subscription.findUnique({ where: { id } });
    if (!before) throw notFound("Subscription", id);
    const { state, reason, ...config } = input;
    const data: Record<string, unknown> = { ...config, updatedAt: new Date() };
    if (config.retryPolicy) data.retryPolicy = config.retryPolicy as object;
    if (state && state !== before.state) {
      data.state = state;
      data.stateReason = state === "active" ? null : (reason ?? "paused by an operator");
    }
    const after = await tx.subscription.update({ where: { id }, data });
    if (state && state !== before.state) {
      await writeAudit(tx, {
        actor: principal.actor,
        action: state === "paused" ? "subscription.pause" : "subscription.resume",
        targetType: "subscription",
        targetId: id,
        reason: reason ?? null,
        details: { from: before.state, to: state },
      });
      // Held deliveries flow again at once on resume.
      if (state === "active") await tx.$executeRaw`SELECT pg_notify('hookledger_deliveries', ${id})`;
    }
    const changed = Object.keys(config);
    if (changed.length > 0) {
      await writeAudit(tx, {
        actor: principal.actor,
        action: "subscription.update",
        targetType: "subscription",
        targetId: id,
        reason: reason ?? null,
        details: { changed, before: Object.fromEntries(changed.map((k) => [k, (before as Record<string, unknown>)[k]])) },
      });
    }
    return toSubscriptionView(after);
  });
}
