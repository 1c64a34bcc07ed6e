import "server-only";
import { randomBytes } from "node:crypto";
import type { PrismaClient, Tx } from "../db/prisma";
import { Prisma, type Subscription } from "../generated/prisma/client";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { validateTargetUrl } from "../net/target";
import {
  assertEndpointAuthRestated,
  assertTlsHasHttps,
  maskHeaders,
  tlsView,
  type HeaderView,
  type TEndpointHeaders,
  type TEndpointTls,
  type TlsView,
} from "./endpoint-auth";
import { generateSecret, sealEndpointValue, sealSecret } from "./secrets";
import type { TCreateSubscription, TUpdateSubscription } from "./subscription-input";
import { failurePolicyColumns, failurePolicyOf, pauseView } from "./failure-policy";
import { GLOBAL_SCOPE, isGlobalAdmin, scopeOf, subscriptionWhere, type Scope } from "../tenants/scope";
import { requireTenant } from "../tenants/manage-tenants";
import { subscriptionHasHistory } from "../ledger/sql/find-deliveries";
import { changeStateByOperator } from "../ledger/sql/subscription-state";
import { canAs } from "../auth/permissions";
import { displayUrl, hasMaskedCredential, URL_MASK } from "../display-url";

/**
 * The subscription columns for `headers` / `tls` as given on create or update (undefined: unchanged; null: cleared).
 * Here rather than beside the sealing in endpoint-auth.ts: Prisma.DbNull is the Prisma client, which the worker
 * (importing endpoint-auth to open the sealed values) would otherwise load for nothing (about 20 MB a process).
 */
function endpointAuthColumns(
  subscriptionId: string,
  input: { headers?: TEndpointHeaders | null; tls?: TEndpointTls | null },
): {
  endpointHeaders?: string | null;
  endpointHeaderView?: HeaderView | typeof Prisma.DbNull;
  endpointTls?: string | null;
  endpointTlsView?: TlsView | typeof Prisma.DbNull;
} {
  const out: ReturnType<typeof endpointAuthColumns> = {};
  if (input.headers !== undefined) {
    const h = input.headers && Object.keys(input.headers).length > 0 ? input.headers : null;
    out.endpointHeaders = h ? sealEndpointValue(JSON.stringify(h), { subscriptionId, column: "headers" }) : null;
    out.endpointHeaderView = h ? maskHeaders(h) : Prisma.DbNull;
  }
  if (input.tls !== undefined) {
    out.endpointTls = input.tls ? sealEndpointValue(JSON.stringify(input.tls), { subscriptionId, column: "tls" }) : null;
    out.endpointTlsView = input.tls ? tlsView(input.tls) : Prisma.DbNull;
  }
  return out;
}

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
  /** Endpoint headers by name, values masked ("Bearer ••••"); null when none. Never the values. */
  headers: HeaderView | null;
  /** Whether a client certificate is set, and its subject and expiry. Never the key. */
  tls: TlsView | { set: false };
  /** Set while archived (lib/subscriptions/archive.ts): no new deliveries, out of the default lists. */
  archivedAt: string | null;
  archiveReason: string | null;
  archivedBy: string | null;
  /** state, when paused: why (manual | failing) and since when; the failure-window policy; the endpoint's failure run and probes. */
} & ReturnType<typeof pauseView>;

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
    headers: (s.endpointHeaderView as HeaderView | null) ?? null,
    tls: (s.endpointTlsView as TlsView | null) ?? { set: false },
    ...pauseView(s),
    archivedAt: s.archivedAt?.toISOString() ?? null,
    archiveReason: s.archiveReason,
    archivedBy: s.archivedBy,
  };
}

/**
 * A view as `principal` may read it: the URL as stored for one who may change the subscription (the edit form and a
 * producer's automation need what is stored), with its credentials masked (lib/display-url.ts) for a reader.
 */
export function asReadBy<T extends { url: string }>(principal: Principal, view: T): T {
  return canAs(principal, "subscriptions.update") ? view : { ...view, url: displayUrl(view.url) };
}

/**
 * A URL whose credential is the mask came from a masked view: storing it would send **** as the district's code.
 * A 400 that says where to find the real one, before anything is written.
 */
function assertNotMasked(url: string): void {
  if (hasMaskedCredential(url))
    throw new AppError(
      "validation_failed",
      `url: a credential in it is the mask ${URL_MASK}, as a reader sees the URL; give the real value (an account that may change the subscription reads the stored URL), or leave url out to keep the stored one.`,
      [{ path: "body.url", message: `holds the mask ${URL_MASK} in place of a credential` }],
    );
}

/** "*" (every type, present and future) is an admin's choice: anyone else names the types, so a new type never reaches an endpoint unasked. */
function assertWildcardAllowed(eventTypes: string[] | undefined, principal: Principal): void {
  // A scoped admin is refused too: `*` would match other tenants' event types only through its own tenant, but it is the
  // global catch-all by intent and stays a global admin's choice.
  if (eventTypes?.includes("*") && !isGlobalAdmin(principal))
    throw new AppError("forbidden", "eventTypes: only an admin may subscribe to every event type (*); name the types this endpoint needs.", [
      { path: "body.eventTypes", message: "only an admin may choose * (every event type); name the types instead" },
    ]);
}

/**
 * The tenant rules of a create (before anything is written): a scoped principal creates for its own tenant only, and
 * must name it (403 otherwise: a tenant-less subscription would receive every tenant's events). A tenant-less
 * subscription is a global admin's, as is registering a tenant: anyone else names a tenant that exists (400 for an
 * unknown one). A global admin naming a tenant that has no row yet registers it (the database does, migration 0020),
 * recorded in the subscription's audit row.
 */
async function assertCreateTenant(prisma: PrismaClient, input: TCreateSubscription, principal: Principal): Promise<void> {
  const scope = scopeOf(principal);
  if (scope.tenantId === null) {
    if (isGlobalAdmin(principal)) return;
    if (!input.tenant)
      throw new AppError(
        "forbidden",
        "tenant: a subscription without a tenant receives every tenant's events; only an admin may create one. Name the district's tenant.",
        [{ path: "body.tenant", message: "required: only an admin may leave it empty" }],
      );
    await requireTenant(prisma, input.tenant, "body.tenant");
    return;
  }
  // A portal opened for one subscription sees that one only: a new one would vanish from its own view.
  if (scope.subscriptionId)
    throw new AppError("forbidden", `This portal is for subscription ${scope.subscriptionId} only; it may not create subscriptions.`, {
      subscriptionId: scope.subscriptionId,
    });
  if (!input.tenant)
    throw new AppError("forbidden", `body.tenant: your account is confined to tenant ${scope.tenantId}; create the subscription with "tenant": "${scope.tenantId}".`, [
      { path: "body.tenant", message: `required: ${scope.tenantId}` },
    ]);
  if (input.tenant !== scope.tenantId)
    throw new AppError("forbidden", `body.tenant: your account is confined to tenant ${scope.tenantId}; it may not create subscriptions for another tenant.`, [
      { path: "body.tenant", message: `must be ${scope.tenantId}` },
    ]);
  // Subscription ids are one namespace for every tenant. A district choosing its own could take a name before the
  // district it describes does ("sub_jeff"), and a 409 on an id would tell it which ids exist elsewhere; so its ids
  // are generated, and the answer here is the same whether the id it sent is taken or not.
  if (input.id !== undefined)
    throw new AppError(
      "validation_failed",
      `id: an account confined to tenant ${scope.tenantId} does not choose subscription ids (they are shared by every tenant); leave id out and one is generated (sub_…).`,
      [{ path: "body.id", message: "leave it out: ids are generated for accounts confined to a tenant" }],
    );
}

export async function createSubscription(prisma: PrismaClient, input: TCreateSubscription, principal: Principal): Promise<SubscriptionView & { secret: string }> {
  await assertCreateTenant(prisma, input, principal);
  assertWildcardAllowed(input.eventTypes, principal);
  assertNotMasked(input.url);
  await validateTargetUrl(input.url);
  assertTlsHasHttps(input.url, Boolean(input.tls));
  const id = input.id ?? `sub_${randomBytes(6).toString("hex")}`;
  const secret = input.secret ?? generateSecret();
  return prisma.$transaction(async (tx) => {
    const exists = await tx.subscription.findUnique({ where: { id }, select: { id: true } });
    if (exists) throw new AppError("conflict", `Subscription ${id} already exists; choose another id or PATCH the existing one.`);
    const registers = await tenantToRegister(tx, input.tenant);
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
        ...endpointAuthColumns(id, input),
        ...failurePolicyColumns(input.failurePolicy),
        secrets: { create: ((sid) => ({ id: sid, secret: sealSecret(secret, { id: sid, subscriptionId: id }) }))(`sec_${randomBytes(8).toString("hex")}`) },
      },
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.create",
      targetType: "subscription",
      targetId: id,
      // The audit log is read by every reader: the URL's credentials are masked there, as endpoint headers are.
      details: { url: displayUrl(input.url), eventTypes: input.eventTypes, tenant: input.tenant ?? null },
    });
    await auditRegisteredTenant(tx, registers, id, principal);
    return { ...toSubscriptionView(sub), secret };
  });
}

/**
 * The database registers a tenant a subscription names that has no row yet (migration 0020's trigger), for a global
 * admin only (assertCreateTenant, updateSubscription). That is an operator's decision like Admin → Tenants' (a typo
 * in the tenant field makes a district), so it leaves the same audit row, in the subscription's transaction.
 */
async function tenantToRegister(tx: Tx, tenant: string | null | undefined): Promise<string | null> {
  if (!tenant) return null;
  return (await tx.tenant.findUnique({ where: { id: tenant }, select: { id: true } })) ? null : tenant;
}

async function auditRegisteredTenant(tx: Tx, tenant: string | null, subscriptionId: string, principal: Principal): Promise<void> {
  if (!tenant) return;
  await writeAudit(tx, {
    actor: principal.actor,
    action: "tenant.create",
    targetType: "tenant",
    targetId: tenant,
    reason: `registered by naming it on subscription ${subscriptionId}`,
    details: { name: tenant },
  });
}

/** The subscription; 404 when there is none or it is another tenant's (`scope`: lib/tenants/scope.ts). */
export async function getSubscription(prisma: PrismaClient, id: string, scope: Scope = GLOBAL_SCOPE): Promise<SubscriptionView> {
  const sub = await prisma.subscription.findFirst({ where: { id, ...subscriptionWhere(scope) } });
  if (!sub) throw notFound("Subscription", id);
  return toSubscriptionView(sub);
}

/** The names of the subscriptions among `ids` the viewer may see, by id (a batch's filter names its subscription by id). */
export async function findSubscriptionNames(prisma: PrismaClient, ids: string[], scope: Scope = GLOBAL_SCOPE): Promise<Record<string, string>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return {};
  const rows = await prisma.subscription.findMany({ where: { id: { in: unique }, ...subscriptionWhere(scope) }, select: { id: true, name: true } });
  return Object.fromEntries(rows.map((r) => [r.id, r.name]));
}

/**
 * A subscription that has deliveries keeps its tenant. Every read of a delivery, its event's payload, its attempts
 * and a lookup by subject value is confined by the subscription's current tenant, so moving one that carried
 * another tenant's events (a tenant-less endpoint, say) would hand that history, and the means to resend it, to the
 * new tenant. Refusing the move closes that for every reader at once, where confining each of them by the event's
 * tenant as well would need the condition in every finder and bulk operation. History already committed refuses the
 * move at once: a subscription producers keep publishing to has some, and the lock below would wait as long as they
 * publish (Row locks, lib/ledger/sql/subscription-state.ts). Otherwise the row is locked FOR UPDATE, which waits for
 * an enqueue or a backfill that has inserted deliveries for it and not yet committed (each holds KEY SHARE on the row
 * until it does: migration 0024), and the check runs again, seeing them.
 */
async function assertNoHistory(tx: Tx, id: string, from: string | null, to: string | null): Promise<void> {
  if (!(await subscriptionHasHistory(tx, id))) {
    await tx.$queryRaw`SELECT id FROM subscriptions WHERE id = ${id} FOR UPDATE`;
    if (!(await subscriptionHasHistory(tx, id))) return;
  }
  const name = (t: string | null) => (t === null ? "no tenant" : `tenant ${t}`);
  throw new AppError(
    "conflict",
    `tenant: subscription ${id} has deliveries (or test sends of stored events) made under ${name(from)}; moving it to ${name(to)} would hand that tenant their history. Archive it (POST /api/v1/subscriptions/${id}/archive) and create a new subscription for ${name(to)}.`,
    [{ path: "body.tenant", message: "a subscription with deliveries cannot change tenant; archive it and create another" }],
  );
}

/**
 * hookledger's operational events (hookledger.delivery.dead_lettered, …) reach a tenant's subscription about every one
 * of the tenant's subscriptions, with their names, event ids and last answers. A portal opened for one subscription
 * sees nothing of the others (lib/tenants/scope.ts), so it may not add those types to its own; types it already has
 * stay, so an edit of something else goes through. 403 otherwise, nothing changed.
 */
function assertOpsTypesInScope(eventTypes: string[] | undefined, had: string[], principal: Principal): void {
  const { subscriptionId } = scopeOf(principal);
  if (!subscriptionId || !eventTypes) return;
  const added = eventTypes.filter((t) => t.startsWith("hookledger.") && !had.includes(t));
  if (added.length > 0)
    throw new AppError(
      "forbidden",
      `body.eventTypes: this portal is for subscription ${subscriptionId} only, and ${added.join(", ")} ${added.length === 1 ? "tells" : "tell"} of every endpoint of the district: ask a manager of the district to subscribe to ${added.length === 1 ? "it" : "them"}.`,
      added.map((t) => ({ path: "body.eventTypes", message: `${t} is about the district's other subscriptions too` })),
    );
}

async function isMaskedFormOfStored(prisma: PrismaClient, id: string, url: string, principal: Principal): Promise<boolean> {
  const sub = await prisma.subscription.findFirst({ where: { id, ...subscriptionWhere(scopeOf(principal)) }, select: { url: true } });
  return sub !== null && sub.url !== url && displayUrl(sub.url) === url;
}

/**
 * Updates configuration and/or pauses or resumes. Pause and resume are audited
 * as their own actions; a disabled subscription (410 Gone) can be reactivated
 * only deliberately, with state "active".
 */
export async function updateSubscription(prisma: PrismaClient, id: string, given: TUpdateSubscription, principal: Principal): Promise<SubscriptionView> {
  assertWildcardAllowed(given.eventTypes, principal);
  // The masked form of the stored URL, sent back as it was read (a whole view PATCHed back), changes nothing: the
  // stored URL stays. Any other URL holding the mask is refused (assertNotMasked).
  const { url: _unchanged, ...withoutUrl } = given;
  const input: TUpdateSubscription =
    given.url !== undefined && hasMaskedCredential(given.url) && (await isMaskedFormOfStored(prisma, id, given.url, principal)) ? withoutUrl : given;
  if (input.url !== undefined) assertNotMasked(input.url);
  if (input.url) await validateTargetUrl(input.url);
  // Moving a subscription to another tenant (or out of every tenant) is a global admin's: a tenant's own principal
  // could otherwise hand its endpoint another district's events, or take one of theirs.
  if (input.tenant !== undefined && !isGlobalAdmin(principal))
    throw new AppError("forbidden", "body.tenant: only a global admin may move a subscription between tenants.", [
      { path: "body.tenant", message: "only a global admin may change the tenant" },
    ]);
  return prisma.$transaction(async (tx) => {
    const before = await tx.subscription.findFirst({ where: { id, ...subscriptionWhere(scopeOf(principal)) } });
    if (!before) throw notFound("Subscription", id);
    assertOpsTypesInScope(input.eventTypes, before.eventTypes, principal);
    if (input.tenant !== undefined && input.tenant !== before.tenant) await assertNoHistory(tx, id, before.tenant, input.tenant);
    assertTlsHasHttps(input.url ?? before.url, input.tls !== undefined ? Boolean(input.tls) : before.endpointTls !== null);
    assertEndpointAuthRestated(before, input);
    if (before.archivedAt)
      throw new AppError("conflict", `Subscription ${id} is archived; unarchive it (POST /api/v1/subscriptions/${id}/unarchive) before changing it.`);
    const { state, reason, headers, tls, failurePolicy, ...config } = input;
    const data: Record<string, unknown> = { ...config, ...endpointAuthColumns(id, { headers, tls }), ...failurePolicyColumns(failurePolicy), updatedAt: new Date() };
    if (config.retryPolicy) data.retryPolicy = config.retryPolicy as object;
    // The state with its audit row is the ledger's (pause, resume); the configuration is written after it, so the view read back has both.
    if (state) await changeStateByOperator(tx, id, { to: state, actor: principal.actor, reason: reason ?? null });
    const registers = input.tenant !== before.tenant ? await tenantToRegister(tx, input.tenant) : null;
    const after = await tx.subscription.update({ where: { id }, data });
    await auditRegisteredTenant(tx, registers, id, principal);
    const changed = [
      ...Object.keys(config),
      ...(headers !== undefined ? ["headers"] : []),
      ...(tls !== undefined ? ["tls"] : []),
      ...(failurePolicy !== undefined ? ["failurePolicy"] : []),
    ];
    if (changed.length > 0) {
      await writeAudit(tx, {
        actor: principal.actor,
        action: "subscription.update",
        targetType: "subscription",
        targetId: id,
        reason: reason ?? null,
        // headers and tls: their masked views only; a credential never enters the audit log.
        details: {
          changed,
          before: Object.fromEntries(
            changed.map((k) => [
              k,
              k === "url"
                ? displayUrl(before.url)
                : k === "headers"
                  ? before.endpointHeaderView
                  : k === "tls"
                    ? before.endpointTlsView
                    : k === "failurePolicy"
                      ? failurePolicyOf(before)
                      : (before as Record<string, unknown>)[k],
            ]),
          ),
        },
      });
    }
    return toSubscriptionView(after);
  });
}
