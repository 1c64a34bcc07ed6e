// The tenant boundary in one place. A principal with a tenant (a district's
// user or token) is confined to that tenant; one without is global. Every
// finder that reads subscriptions, deliveries, events, attempts, dead letters,
// batches or audit rows takes a Scope and adds `scopeWhere`/`subscriptionInScope`
// to its SQL (a parameter, never spliced text), so a page, a route, an export
// and a bulk operation cannot read past it whatever filter they pass.
// Reads of another tenant's object are answered as if it did not exist (404),
// so a scoped caller cannot learn which ids exist elsewhere.
import "server-only";
import { raw, sql, type Sql } from "../ledger/read/db";
import { AppError } from "../errors";

export type Scope = { readonly tenantId: string | null };

/** Everything: global principals, the system, the worker. */
export const GLOBAL_SCOPE: Scope = Object.freeze({ tenantId: null });

/** The scope of a principal (or anything with a tenantId): null or absent = global. */
export function scopeOf(p: { tenantId?: string | null } | null | undefined): Scope {
  return p?.tenantId ? { tenantId: p.tenantId } : GLOBAL_SCOPE;
}

export function isScoped(scope: Scope): scope is { tenantId: string } {
  return scope.tenantId !== null;
}

/** A global admin: the only principal that may make tenant-less or `*` subscriptions, move subscriptions between tenants, create tenants. */
export function isGlobalAdmin(p: { role: string; tenantId?: string | null }): boolean {
  return p.role === "admin" && !p.tenantId;
}

// The columns the conditions below may name: fixed strings of this code base,
// never input, so raw is safe here. The tenant value is always a parameter.
type TenantColumn = "s.tenant" | "tenant" | "sub.tenant";
type SubscriptionIdColumn = "d.subscription_id" | "subscription_id" | "s.id" | "id" | "g.subscription_id" | "x.subscription_id";

/** `<column> = $tenant` on a subscriptions.tenant column; `true` for a global scope. */
export function scopeWhere(scope: Scope, column: TenantColumn = "s.tenant"): Sql {
  return scope.tenantId === null ? sql`true` : sql`${raw(column)} = ${scope.tenantId}`;
}

/** `<column> IN (the tenant's subscription ids)` for a table that only holds a subscription id; `true` for a global scope. */
export function subscriptionInScope(scope: Scope, column: SubscriptionIdColumn): Sql {
  return scope.tenantId === null ? sql`true` : sql`${raw(column)} IN (SELECT sc.id FROM subscriptions sc WHERE sc.tenant = ${scope.tenantId})`;
}

/** `<column> = $tenant` on events.tenant (the event's own tenant, its subject.tenant); `true` for a global scope. */
export function eventTenantWhere(scope: Scope, column: "e.tenant" | "tenant" = "tenant"): Sql {
  return scope.tenantId === null ? sql`true` : sql`${raw(column)} = ${scope.tenantId}`;
}

/**
 * The subject values an event must hold to match `q` in `scope`: `q`, and for a scoped caller also `tenant:<its
 * tenant>`, which the ingest stores for every event with a subject.tenant (lib/events/publish.ts subjectValues, and
 * the operational events' trigger). Both go to the GIN index in one `@>`, so a value common in another tenant is not
 * read row by row to be filtered out afterwards.
 */
export function subjectValuesInScope(scope: Scope, q: string): string[] {
  return scope.tenantId === null ? [q] : [q, `tenant:${scope.tenantId}`];
}

/** For a Prisma `where`: the tenant condition on a Subscription (undefined = no condition). */
export function subscriptionWhere(scope: Scope): { tenant: string } | Record<string, never> {
  return scope.tenantId === null ? {} : { tenant: scope.tenantId };
}

/**
 * A scoped producer publishes for its own tenant only: an event whose subject.tenant is absent or another tenant's is
 * refused (403) before anything is written. An in-memory comparison with the token's tenant (already in hand from the
 * token lookup): no query on the publish path. null when the event may be published.
 */
export function publishTenantError(scope: Scope, subjectTenant: unknown, where = "subject.tenant"): AppError | null {
  if (scope.tenantId === null) return null;
  const tenant = subjectTenant === undefined || subjectTenant === null ? null : String(subjectTenant);
  if (tenant === scope.tenantId) return null;
  return new AppError(
    "forbidden",
    tenant === null
      ? `${where}: this token publishes for tenant ${scope.tenantId} only; send "subject": {"tenant": "${scope.tenantId}", …}.`
      : `${where}: this token publishes for tenant ${scope.tenantId} only, not ${tenant}.`,
    [{ path: where, message: `must be ${scope.tenantId}` }],
  );
}
