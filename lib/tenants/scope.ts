// The tenant boundary in one place. A principal with a tenant (a district's
// user or token) is confined to that tenant; one without is global. Every
// finder that reads subscriptions, deliveries, events, attempts, dead letters,
// batches or audit rows takes a Scope and adds `scopeWhere`/`subscriptionInScope`
// to its SQL (a parameter, never spliced text), so a page, a route, an export
// and a bulk operation cannot read past it whatever filter they pass.
// Reads of another tenant's object are answered as if it did not exist (404),
// so a scoped caller cannot learn which ids exist elsewhere.
// A district portal opened for one subscription narrows the scope further
// (subscriptionId): the same conditions then also name that subscription, so
// the tenant's other subscriptions are as absent as another tenant's.
import "server-only";
import { raw, sql, type Sql } from "../ledger/read/db";
import { AppError } from "../errors";
import { eventDeliveredTo } from "../ledger/sql/subscription-events";

export type Scope = {
  readonly tenantId: string | null;
  /** Within the tenant, this subscription only (a portal link for one). */
  readonly subscriptionId?: string | null;
};

/** Everything: global principals, the system, the worker. */
export const GLOBAL_SCOPE: Scope = Object.freeze({ tenantId: null });

/** The scope of a principal (or anything with a tenantId): null or absent = global. */
export function scopeOf(p: { tenantId?: string | null; subscriptionId?: string | null } | null | undefined): Scope {
  if (!p?.tenantId) return GLOBAL_SCOPE;
  return p.subscriptionId ? { tenantId: p.tenantId, subscriptionId: p.subscriptionId } : { tenantId: p.tenantId };
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

/** The id column of the subscriptions row a tenant column belongs to. */
const ID_OF: Record<TenantColumn, string> = { "s.tenant": "s.id", tenant: "id", "sub.tenant": "sub.id" };

/** `<column> = $tenant` on a subscriptions.tenant column (and its id, for a one-subscription scope); `true` for a global scope. */
export function scopeWhere(scope: Scope, column: TenantColumn = "s.tenant"): Sql {
  if (scope.tenantId === null) return sql`true`;
  return scope.subscriptionId ? sql`(${raw(column)} = ${scope.tenantId} AND ${raw(ID_OF[column])} = ${scope.subscriptionId})` : sql`${raw(column)} = ${scope.tenantId}`;
}

/** `<column> IN (the tenant's subscription ids)` for a table that only holds a subscription id; `true` for a global scope. */
export function subscriptionInScope(scope: Scope, column: SubscriptionIdColumn): Sql {
  if (scope.tenantId === null) return sql`true`;
  if (scope.subscriptionId) return sql`${raw(column)} IN (SELECT sc.id FROM subscriptions sc WHERE sc.tenant = ${scope.tenantId} AND sc.id = ${scope.subscriptionId})`;
  return sql`${raw(column)} IN (SELECT sc.id FROM subscriptions sc WHERE sc.tenant = ${scope.tenantId})`;
}

/**
 * `<column> = $tenant` on events.tenant (the event's own tenant, its subject.tenant); `true` for a global scope. For a
 * one-subscription scope, also only the events that subscription has a delivery of.
 */
export function eventTenantWhere(scope: Scope, column: "e.tenant" | "tenant" = "tenant"): Sql {
  if (scope.tenantId === null) return sql`true`;
  if (scope.subscriptionId) {
    return sql`(${raw(column)} = ${scope.tenantId} AND ${eventDeliveredTo(column === "e.tenant" ? "e.id" : "id", scope.subscriptionId)})`;
  }
  return sql`${raw(column)} = ${scope.tenantId}`;
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

/**
 * For a Prisma `where`: the tenant condition on a Subscription (empty = no condition). A one-subscription scope adds
 * its id under AND, so a caller's own `id` in the same object is kept and both must hold.
 */
export function subscriptionWhere(scope: Scope): { tenant: string; AND?: { id: string }[] } | Record<string, never> {
  if (scope.tenantId === null) return {};
  return scope.subscriptionId ? { tenant: scope.tenantId, AND: [{ id: scope.subscriptionId }] } : { tenant: scope.tenantId };
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
