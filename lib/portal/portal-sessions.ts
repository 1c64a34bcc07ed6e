// District portal sessions: an admin or the SaaS's backend (a `portal` token) mints a link; opening it once signs that
// browser in as the district (tenant-scoped, manager or support rights, optionally one subscription only) until the
// link's expiresAt; revoking it ends the link and the browser session opened from it. See README "District portal".
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import type { Role } from "../auth/permissions";
import { publicUrl } from "../auth/host";
import { newPortalLink, verifyPortalLink } from "./link-token";
import type { TCreatePortalSession } from "./portal-input";

export type PortalSessionView = { id: string; url: string; expiresAt: string; tenant: string; subscriptionId: string | null; readOnly: boolean };

/** The path that opens a link (app/portal/open/route.ts, lib/portal/open-link.ts); public in proxy.ts. */
export const PORTAL_OPEN_PATH = "/portal/open";

/** How a portal principal appears in audit rows. */
const portalActor = (tenant: string) => `portal:${tenant}`;

/** Mints a link for `input.tenant` (and one of its subscriptions); audited as portal.session.create. */
export async function createPortalSession(prisma: PrismaClient, input: TCreatePortalSession, principal: Principal, origin: string): Promise<PortalSessionView> {
  const tenant = await prisma.tenant.findUnique({ where: { id: input.tenant }, select: { id: true } });
  if (!tenant)
    throw new AppError("not_found", `body.tenant: there is no tenant ${input.tenant}; register it first (POST /api/v1/tenants).`, [
      { path: "body.tenant", message: `unknown tenant ${input.tenant}` },
    ]);
  const subscriptionId = input.subscriptionId ?? null;
  if (subscriptionId) {
    const sub = await prisma.subscription.findUnique({ where: { id: subscriptionId }, select: { tenant: true } });
    // Another tenant's subscription is answered like an unknown one: the caller learns nothing about it.
    if (!sub || sub.tenant !== tenant.id)
      throw new AppError("validation_failed", `body.subscriptionId: tenant ${tenant.id} has no subscription ${subscriptionId}.`, [
        { path: "body.subscriptionId", message: `not a subscription of ${tenant.id}` },
      ]);
  }
  const link = newPortalLink();
  const expiresAt = new Date(Date.now() + input.expiresInSeconds * 1000);
  await prisma.$transaction(async (tx) => {
    await tx.portalSession.create({
      data: { id: link.id, tenant: tenant.id, subscriptionId, readOnly: input.readOnly, tokenHash: link.tokenHash, createdBy: principal.actor, expiresAt },
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "portal.session.create",
      targetType: "portal_session",
      targetId: link.id,
      details: { tenant: tenant.id, subscriptionId, readOnly: input.readOnly, expiresAt: expiresAt.toISOString() },
      tenantId: tenant.id,
    });
  });
  const url = `${origin}${PORTAL_OPEN_PATH}?token=${link.token}`;
  return { id: link.id, url, expiresAt: expiresAt.toISOString(), tenant: tenant.id, subscriptionId, readOnly: input.readOnly };
}

/**
 * Ends a link and any browser session opened from it; audited. A second revoke answers the same and writes nothing.
 * `replacedBy`: the session ends because its browser took another in its place (lib/auth/replaced-session.ts).
 */
export async function revokePortalSession(
  prisma: PrismaClient,
  id: string,
  principal: Principal,
  opts: { replacedBy?: "sign-in" | "portal" } = {},
): Promise<{ id: string; revokedAt: string }> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.portalSession.findUnique({ where: { id } });
    if (!row) throw notFound("Portal session", id);
    if (row.revokedAt) return { id, revokedAt: row.revokedAt.toISOString() };
    const revokedAt = new Date();
    const done = await tx.portalSession.updateMany({ where: { id, revokedAt: null }, data: { revokedAt, revokedBy: principal.actor } });
    if (done.count === 0) throw new AppError("conflict", `Portal session ${id} was revoked meanwhile.`);
    await writeAudit(tx, {
      actor: principal.actor,
      action: "portal.session.revoke",
      targetType: "portal_session",
      targetId: id,
      details: { tenant: row.tenant, subscriptionId: row.subscriptionId, ...(opts.replacedBy ? { replacedBy: opts.replacedBy } : {}) },
      tenantId: row.tenant,
    });
    return { id, revokedAt: revokedAt.toISOString() };
  });
}

/** Why a link did not open: each has its line on the sign-in page (app/(auth)/signin/portal-reason.tsx). */
type PortalRefusal = "invalid" | "expired" | "used" | "revoked";

/**
 * Whether a link would open, without spending it: what a GET of the link answers (lib/portal/open-link.ts), so that a
 * mail scanner fetching the address leaves the link for its person.
 */
export async function checkPortalLink(
  prisma: PrismaClient,
  token: string | null,
): Promise<{ ok: true; tenant: string; subscriptionId: string | null; readOnly: boolean } | { ok: false; reason: PortalRefusal }> {
  const link = verifyPortalLink(token);
  if (!link) return { ok: false, reason: "invalid" };
  const row = await prisma.portalSession.findUnique({ where: { tokenHash: link.tokenHash } });
  if (!row || row.id !== link.id) return { ok: false, reason: "invalid" };
  const refusal = refusalOf(row);
  return refusal ? { ok: false, reason: refusal } : { ok: true, tenant: row.tenant, subscriptionId: row.subscriptionId, readOnly: row.readOnly };
}

/** A portal's names as its people know them: the district's, and its one subscription's when the portal has one. */
export async function portalScopeNames(
  prisma: PrismaClient,
  scope: { tenant: string; subscriptionId: string | null },
): Promise<{ district: string; subscription: string | null }> {
  const [tenant, sub] = await Promise.all([
    prisma.tenant.findUnique({ where: { id: scope.tenant }, select: { name: true } }),
    scope.subscriptionId ? prisma.subscription.findUnique({ where: { id: scope.subscriptionId }, select: { name: true } }) : null,
  ]);
  return { district: tenant?.name ?? scope.tenant, subscription: scope.subscriptionId ? (sub?.name ?? scope.subscriptionId) : null };
}

/**
 * Spends a link: one guarded UPDATE, so two browsers racing with the same link get one session between them. The
 * token's tag is checked first: a forged or altered token is refused without a query.
 */
export async function openPortalLink(
  prisma: PrismaClient,
  token: string | null,
): Promise<{ ok: true; session: LivePortalSession } | { ok: false; reason: PortalRefusal }> {
  const link = verifyPortalLink(token);
  if (!link) return { ok: false, reason: "invalid" };
  const now = new Date();
  const spent = await prisma.portalSession.updateMany({
    where: { id: link.id, tokenHash: link.tokenHash, usedAt: null, revokedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  const row = await prisma.portalSession.findUnique({ where: { tokenHash: link.tokenHash } });
  if (!row || row.id !== link.id) return { ok: false, reason: "invalid" };
  if (spent.count === 1) return { ok: true, session: liveView(row) };
  return { ok: false, reason: refusalOf(row) ?? "expired" };
}

/** Why a link's row no longer opens, the most telling reason first; null while it still would. */
function refusalOf(row: { usedAt: Date | null; revokedAt: Date | null; expiresAt: Date }): PortalRefusal | null {
  if (row.revokedAt) return "revoked";
  if (row.usedAt) return "used";
  if (row.expiresAt.getTime() <= Date.now()) return "expired";
  return null;
}

type LivePortalSession = { id: string; tenant: string; subscriptionId: string | null; readOnly: boolean; expiresAt: Date };

function liveView(row: { id: string; tenant: string; subscriptionId: string | null; readOnly: boolean; expiresAt: Date }): LivePortalSession {
  return { id: row.id, tenant: row.tenant, subscriptionId: row.subscriptionId, readOnly: row.readOnly, expiresAt: row.expiresAt };
}

/** A browser's portal session while it lasts: opened, not revoked, not past expiresAt; null otherwise. */
export async function findLivePortalSession(prisma: PrismaClient, id: string): Promise<LivePortalSession | null> {
  const row = await prisma.portalSession.findUnique({ where: { id } });
  if (!row || !row.usedAt || row.revokedAt || row.expiresAt.getTime() <= Date.now()) return null;
  return liveView(row);
}

/** The principal of a live portal session: the district's manager (support when read-only), confined to its tenant. */
export function portalPrincipal(s: LivePortalSession, csrf: string): Principal {
  const role: Role = s.readOnly ? "support" : "manager";
  return {
    kind: "portal",
    id: s.id,
    role,
    actor: portalActor(s.tenant),
    csrf,
    tenantId: s.tenant,
    subscriptionId: s.subscriptionId,
    portalExpiresAt: s.expiresAt,
  };
}

/**
 * Where the link points: HOOKLEDGER_PUBLIC_URL when set (the address districts can reach), else the address the API
 * call came in on (through a TLS proxy's x-forwarded-proto and -host).
 */
export function portalLinkOrigin(req: Pick<Request, "headers" | "url">): string {
  const pub = publicUrl();
  if (pub) return pub.origin;
  const url = new URL(req.url);
  const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim() || url.protocol.replace(/:$/, "");
  const host = req.headers.get("x-forwarded-host")?.split(",")[0].trim() || req.headers.get("host") || url.host;
  return `${proto === "https" ? "https" : "http"}://${host}`;
}
