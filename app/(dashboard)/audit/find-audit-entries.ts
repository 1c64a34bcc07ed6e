// The Audit page's query: operator actions, newest first, filtered by actor,
// action, target and time; paged by id (audit ids grow with time).
import { z } from "zod";
import type { PrismaClient } from "@/lib/db/prisma";
import type { Prisma } from "@/lib/generated/prisma/client";
import { GLOBAL_SCOPE, type Scope } from "@/lib/tenants/scope";
import { actorFromWords } from "@/lib/words";

export const ZAuditQuery = z.object({
  actor: z.string().trim().max(200).optional().catch(undefined),
  action: z.string().trim().max(100).optional().catch(undefined),
  targetType: z.string().trim().max(100).optional().catch(undefined),
  targetId: z.string().trim().max(200).optional().catch(undefined),
  /** A global viewer's filter on the tenant a row touched; a scoped viewer's own tenant applies whatever this says. */
  tenant: z.string().trim().max(100).optional().catch(undefined),
  from: z.iso.datetime({ offset: true, local: true }).optional().catch(undefined),
  to: z.iso.datetime({ offset: true, local: true }).optional().catch(undefined),
  before: z.coerce.number().int().positive().optional().catch(undefined),
});
export type TAuditQuery = z.infer<typeof ZAuditQuery>;

export type AuditRow = {
  id: string;
  createdAt: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  reason: string | null;
  details: unknown;
  tenantId: string | null;
};

const AUDIT_PAGE_SIZE = 50;

/** `scope`: a principal confined to a tenant reads the rows that touched its tenant only (audit_entries.tenant_id, migration 0020). */
export async function findAuditEntries(prisma: PrismaClient, q: TAuditQuery, scope: Scope = GLOBAL_SCOPE): Promise<{ items: AuditRow[]; nextBefore: string | null }> {
  const where: Prisma.AuditEntryWhereInput = {};
  // The scope wins over the filter: a scoped viewer naming another tenant gets an empty page, never that tenant's rows.
  if (scope.tenantId !== null) where.tenantId = scope.tenantId;
  else if (q.tenant) where.tenantId = q.tenant;
  // A portal for one subscription: the rows that name it (as the target, or in their details), not the tenant's others.
  if (scope.tenantId !== null && scope.subscriptionId)
    where.OR = [{ targetType: "subscription", targetId: scope.subscriptionId }, { details: { path: ["subscriptionId"], equals: scope.subscriptionId } }];
  if (q.actor) where.actor = { contains: actorFromWords(q.actor), mode: "insensitive" };
  if (q.action) where.action = q.action;
  if (q.targetType) where.targetType = q.targetType;
  if (q.targetId) where.targetId = q.targetId;
  // The page's form sends UTC instants (the viewer picks in their own zone); a
  // hand-written time without a zone is taken as UTC.
  const utc = (v: string) => new Date(/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : `${v}Z`);
  if (q.from || q.to) where.createdAt = { ...(q.from ? { gte: utc(q.from) } : {}), ...(q.to ? { lt: utc(q.to) } : {}) };
  if (q.before) where.id = { lt: BigInt(q.before) };
  const rows = await prisma.auditEntry.findMany({ where, orderBy: { id: "desc" }, take: AUDIT_PAGE_SIZE + 1 });
  const items = rows.slice(0, AUDIT_PAGE_SIZE).map((r) => ({
    id: String(r.id),
    createdAt: r.createdAt.toISOString(),
    actor: r.actor,
    action: r.action,
    targetType: r.targetType,
    targetId: r.targetId,
    reason: r.reason,
    details: r.details,
    tenantId: r.tenantId ?? null,
  }));
  return { items, nextBefore: rows.length > AUDIT_PAGE_SIZE ? items[items.length - 1].id : null };
}
