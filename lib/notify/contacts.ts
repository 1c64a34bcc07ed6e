// A tenant's notification contacts: the addresses that get an e-mail and the
// Slack-compatible webhook that gets a post when one of its endpoints fails
// (lib/notify/ingest.ts), and the district's own dead-letter threshold (the
// ops trigger reads it, migration 0044). A global admin sets them for any tenant; a district's
// manager (or its portal session) for its own only: another tenant is 404. A portal opened for
// one subscription reads them masked and may not change them: they are the whole district's,
// and the notices they receive name its other subscriptions.
import "server-only";
import { ZContacts, type TContacts } from "./input";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { canAs } from "../auth/permissions";
import { isGlobalAdmin, scopeOf } from "../tenants/scope";
import { validateTargetUrl } from "../net/target";
import { getNotificationSettings } from "./settings";

export { ZContacts, type TContacts } from "./input";

export type ContactsView = {
  tenant: string;
  emails: string[];
  webhookUrl: string | null;
  dlqThreshold: number | null;
  defaultDlqThreshold: number;
  updatedAt: string | null;
  updatedBy: string | null;
};

/** 404 unless the principal may see the tenant (its own, or any for a global one) and it exists. */
async function visibleTenant(prisma: PrismaClient, tenantId: string, principal: Principal): Promise<string> {
  const scope = scopeOf(principal);
  if (scope.tenantId !== null && scope.tenantId !== tenantId) throw notFound("Tenant", tenantId);
  const t = await prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
  if (!t) throw notFound("Tenant", tenantId);
  return t.id;
}

/**
 * Whether the principal may replace these contacts: a global admin, or a district's manager for its own, but not a
 * portal for one subscription (its scope holds none of the other subscriptions those notices are about).
 */
export function mayChangeContacts(principal: Principal): boolean {
  const scope = scopeOf(principal);
  if (!canAs(principal, "contacts.update") || scope.subscriptionId) return false;
  return scope.tenantId !== null || isGlobalAdmin(principal);
}

/** A webhook URL as a reader who may not change it sees it: its path is its secret (whoever knows it can post). */
const maskedWebhook = (url: string) => `${new URL(url).origin}/…`;

export async function getContacts(prisma: PrismaClient, tenantId: string, principal: Principal): Promise<ContactsView> {
  const id = await visibleTenant(prisma, tenantId, principal);
  const [c, defaults] = await Promise.all([prisma.tenantContact.findUnique({ where: { tenant: id } }), getNotificationSettings(prisma)]);
  const mayChange = mayChangeContacts(principal);
  return {
    tenant: id,
    emails: c?.emails ?? [],
    webhookUrl: c?.webhookUrl ? (mayChange ? c.webhookUrl : maskedWebhook(c.webhookUrl)) : null,
    dlqThreshold: c?.dlqThreshold ?? null,
    defaultDlqThreshold: defaults.dlqThreshold,
    updatedAt: c?.updatedAt.toISOString() ?? null,
    updatedBy: c?.updatedBy ?? null,
  };
}

/** The webhook URL checked like an endpoint's (scheme, credentials, the SSRF guard), with the field named webhookUrl. */
async function checkWebhook(raw: string): Promise<URL> {
  try {
    return await validateTargetUrl(raw);
  } catch (err) {
    if (err instanceof AppError) {
      const message = err.message.replace(/^url: /, "");
      throw new AppError("validation_failed", `webhookUrl: ${message}`, [{ path: "body.webhookUrl", message }]);
    }
    throw err;
  }
}

/** Replaces the tenant's contacts (all of them: what is not sent is removed), audited in the same transaction. */
export async function setContacts(prisma: PrismaClient, tenantId: string, input: TContacts, principal: Principal): Promise<ContactsView> {
  const scope = scopeOf(principal);
  if (scope.tenantId === null && !isGlobalAdmin(principal))
    throw new AppError("forbidden", "Only an admin may set another tenant's contacts; a district's manager sets its own.", { role: principal.role });
  if (scope.subscriptionId)
    throw new AppError(
      "forbidden",
      `This portal is for subscription ${scope.subscriptionId} only; the notification contacts are the whole district's: ask a manager of the district to change them.`,
      { subscriptionId: scope.subscriptionId },
    );
  const id = await visibleTenant(prisma, tenantId, principal);
  const v = ZContacts.parse(input);
  const emails = [...new Set(v.emails.map((e) => e.toLowerCase()))];
  const webhook = v.webhookUrl ? await checkWebhook(v.webhookUrl) : null;
  const dlqThreshold = v.dlqThreshold ?? null;
  const data = { emails, webhookUrl: webhook ? v.webhookUrl! : null, dlqThreshold, updatedBy: principal.actor, updatedAt: new Date() };
  await prisma.$transaction(async (tx) => {
    await tx.tenantContact.upsert({ where: { tenant: id }, create: { tenant: id, ...data }, update: data });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "tenant.contacts.update",
      targetType: "tenant",
      targetId: id,
      details: { emails: emails.length, webhookHost: webhook?.host ?? null, dlqThreshold },
      tenantId: id,
    });
  });
  return getContacts(prisma, id, principal);
}
