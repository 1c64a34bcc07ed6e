// Tenants (districts) as rows (migration 0020): listing and creating them, and
// the check every account and token creation makes on the tenant it names.
// Creating a tenant is a global admin's; a scoped principal sees its own only.
import "server-only";
import { badPageCursor, decodePageCursor, encodePageCursor } from "../api/page-cursor";
import { ZCreateTenant, ZListTenants, type TCreateTenant, type TListTenants } from "./tenant-input";
import type { PrismaClient, Tx } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { can } from "../auth/permissions";
import { isGlobalAdmin, scopeOf, subscriptionWhere } from "./scope";

export { ZCreateTenant, ZListTenants, type TCreateTenant, type TListTenants } from "./tenant-input";

export type TenantView = { id: string; name: string; createdAt: string };

const toView = (t: { id: string; name: string; createdAt: Date }): TenantView => ({ id: t.id, name: t.name, createdAt: t.createdAt.toISOString() });

const BAD_CURSOR = "not a nextCursor this list answered; start again without cursor";

// The cursor is opaque to callers: ["t", the last id of the page]. Keyset paging by id, so a page never
// repeats or skips a tenant that stayed put, whatever was registered meanwhile.
const encodeCursor = (id: string) => encodePageCursor(["t", id]);

function decodeCursor(cursor: string): string {
  const parsed = decodePageCursor(cursor, BAD_CURSOR);
  if (parsed.length !== 2 || parsed[0] !== "t" || typeof parsed[1] !== "string" || parsed[1].length > 200) throw badPageCursor(BAD_CURSOR);
  return parsed[1];
}

/**
 * GET /api/v1/tenants, the CLI and the dashboard's tenant suggestions: one page of the tenants by id whose id or name
 * contains `q` (any case); `nextCursor` null on the last page. A scoped principal's page holds its own tenant only,
 * whatever `q` or `cursor` say.
 */
export async function listTenantPage(prisma: PrismaClient, principal: Principal, input: TListTenants = {}): Promise<{ items: TenantView[]; nextCursor: string | null }> {
  const o = ZListTenants.parse(input);
  const scope = scopeOf(principal);
  const after = o.cursor ? decodeCursor(o.cursor) : null;
  const rows = await prisma.tenant.findMany({
    where: {
      AND: [
        scope.tenantId === null ? {} : { id: scope.tenantId },
        after === null ? {} : { id: { gt: after } },
        o.q ? { OR: [{ id: { contains: o.q, mode: "insensitive" as const } }, { name: { contains: o.q, mode: "insensitive" as const } }] } : {},
      ],
    },
    orderBy: { id: "asc" },
    take: o.limit + 1,
  });
  const page = rows.slice(0, o.limit);
  return { items: page.map(toView), nextCursor: rows.length > o.limit ? encodeCursor(page[page.length - 1].id) : null };
}

/** The names of the tenants `ids` name (those that exist), for pages that show a row's tenant by name. */
export async function tenantNames(prisma: PrismaClient, ids: Iterable<string | null | undefined>): Promise<Map<string, string>> {
  const want = [...new Set([...ids].filter((x): x is string => !!x))];
  if (want.length === 0) return new Map();
  const rows = await prisma.tenant.findMany({ where: { id: { in: want } }, select: { id: true, name: true } });
  return new Map(rows.map((t) => [t.id, t.name]));
}

/** Tenants a page of the Tenants page holds: each row carries its counts and a contacts form, so a page stays light at thousands. */
const TENANT_PAGE_SIZE = 100;

/**
 * One page of the tenants, by id, whose id or name contains `q` (any case), with how many match: for a global principal;
 * a scoped one's own only. `page` counts from 1; past the last it is the last.
 */
export async function findTenantPage(
  prisma: PrismaClient,
  principal: Principal,
  opts: { q?: string; page?: number },
): Promise<{ items: TenantView[]; total: number; page: number; pageSize: number }> {
  const scope = scopeOf(principal);
  const q = opts.q?.trim().slice(0, 200) ?? "";
  const where = {
    ...(scope.tenantId === null ? {} : { id: scope.tenantId }),
    ...(q ? { OR: [{ id: { contains: q, mode: "insensitive" as const } }, { name: { contains: q, mode: "insensitive" as const } }] } : {}),
  };
  const total = await prisma.tenant.count({ where });
  const last = Math.max(1, Math.ceil(total / TENANT_PAGE_SIZE));
  const page = Math.min(last, Math.max(1, Math.floor(opts.page ?? 1) || 1));
  const rows = await prisma.tenant.findMany({ where, orderBy: { id: "asc" }, skip: (page - 1) * TENANT_PAGE_SIZE, take: TENANT_PAGE_SIZE });
  return { items: rows.map(toView), total, page, pageSize: TENANT_PAGE_SIZE };
}

/** Registers a tenant: global admins only (403), a bad id 400, an existing id 409; audited in the same transaction. */
export async function createTenant(prisma: PrismaClient, input: TCreateTenant, principal: Principal): Promise<TenantView> {
  if (!isGlobalAdmin(principal) || !can(principal.role, "users.manage"))
    throw new AppError("forbidden", "Only a global admin may create tenants.", { role: principal.role, tenant: principal.tenantId ?? null });
  const v = ZCreateTenant.parse(input);
  return prisma.$transaction(async (tx) => {
    if (await tx.tenant.findUnique({ where: { id: v.id }, select: { id: true } })) throw new AppError("conflict", `Tenant ${v.id} already exists.`);
    const t = await tx.tenant.create({ data: { id: v.id, name: v.name } });
    await writeAudit(tx, { actor: principal.actor, action: "tenant.create", targetType: "tenant", targetId: t.id, details: { name: t.name }, tenantId: t.id });
    return toView(t);
  });
}

/**
 * The tenant an account or token is to be confined to must exist: 400 otherwise (the caller creates it first). null or
 * undefined (global) passes. Returns the id as stored.
 */
export async function requireTenant(prisma: PrismaClient | Tx, tenantId: string | null | undefined, field = "tenant"): Promise<string | null> {
  if (tenantId === null || tenantId === undefined || tenantId === "") return null;
  const t = await prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
  if (!t)
    throw new AppError(
      "validation_failed",
      `${field}: there is no tenant ${tenantId}; create it first (hookledger tenant create --id ${tenantId} --name "…", or POST /api/v1/tenants).`,
      [{ path: field, message: `unknown tenant ${tenantId}` }],
    );
  return t.id;
}

/**
 * For use cases that take a subscription id and do not read it through a scoped finder themselves (rotation, archive,
 * test sends): 404 for a scoped principal unless the subscription is its tenant's, before anything is read or written.
 * A global principal passes (the use case answers 404 for an unknown id as before).
 */
export async function assertSubscriptionVisible(prisma: PrismaClient, id: string, principal: Principal): Promise<void> {
  const scope = scopeOf(principal);
  if (scope.tenantId === null) return;
  const sub = await prisma.subscription.findFirst({ where: { id, ...subscriptionWhere(scope) }, select: { id: true } });
  if (!sub) throw notFound("Subscription", id);
}

/** For what only a global principal may do (erasure across tenants): 403 for a scoped one. */
export function assertGlobalPrincipal(principal: Principal, what: string): void {
  const scope = scopeOf(principal);
  if (scope.tenantId !== null) throw new AppError("forbidden", `Your account is confined to tenant ${scope.tenantId}; it may not ${what}.`, { tenant: scope.tenantId });
}
