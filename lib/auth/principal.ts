import "server-only";
import type { Role } from "./permissions";
import { getPrisma } from "../db/prisma";
import { findTokenPrincipal } from "./tokens";
import { sessionCookieOf, unsealSession } from "./cookies";
import { findActiveUser } from "./users";
import { findLivePortalSession, portalPrincipal } from "../portal/portal-sessions";

export type Principal = {
  kind: "token" | "user" | "system" | "portal";
  id: string;
  role: Role;
  /** How the principal appears in audit rows: "token:<name>", "user:<email>", "portal:<tenant>", "system". */
  actor: string;
  /** Users only. */
  email?: string;
  /** Users and portal sessions: the CSRF token bound to this session (lib/auth/csrf.ts). */
  csrf?: string;
  /** Users only: an admin set this password; nothing but the password change is served until it is changed. */
  mustChangePassword?: boolean;
  /**
   * The tenant (district) this user or token is confined to; null (or absent, for
   * principals built in code such as SYSTEM and the CLI) = global. Every finder
   * takes the principal or its scope (lib/tenants/scope.ts) and adds the tenant
   * condition in SQL; see README "Tenants".
   */
  tenantId?: string | null;
  /** A district portal opened for one subscription: it sees that subscription only (lib/tenants/scope.ts). */
  subscriptionId?: string | null;
  /** Portal sessions only: when the session ends (the link's expiresAt). */
  portalExpiresAt?: Date;
};

export const SYSTEM: Principal = { kind: "system", id: "system", role: "admin", actor: "system", tenantId: null };

/**
 * The signed-in user of a sealed session cookie value; null if none, invalid,
 * the user is gone or disabled, or the session was issued before the user's
 * session version last moved (signed out, disabled, role or password changed).
 */
export async function principalFromSessionCookie(sealed: string | undefined | null): Promise<Principal | null> {
  const session = await unsealSession(sealed);
  if (!session) return null;
  // A district portal session: alive while its row is not revoked and not past expiresAt (lib/portal).
  if (session.portal) {
    const live = await findLivePortalSession(getPrisma(), session.portal);
    return live ? portalPrincipal(live, session.csrf) : null;
  }
  const user = await findActiveUser(getPrisma(), session.uid);
  if (!user || user.sessionVersion !== session.ver) return null;
  return {
    kind: "user",
    id: user.id,
    role: user.role as Role,
    actor: `user:${user.email}`,
    email: user.email,
    csrf: session.csrf,
    tenantId: user.tenantId ?? null,
    ...(user.mustChangePassword ? { mustChangePassword: true } : {}),
  };
}

/**
 * What a request without a live principal once had: a district portal session or a person's that has since ended
 * (expired, revoked, signed out elsewhere), told apart by its sealed cookie; null when it carried none, or a bearer
 * token. The API then answers in that viewer's words, and the page sends it to the sign-in page's line for it.
 */
export async function endedSessionOf(req: Pick<Request, "headers">): Promise<"portal" | "user" | null> {
  if (req.headers.get("authorization")) return null;
  const session = await unsealSession(sessionCookieOf(req.headers.get("cookie")).sealed);
  if (!session) return null;
  return session.portal ? "portal" : "user";
}

/**
 * The caller of an API request: `Authorization: Bearer <token>` if present
 * (a bad token is not rescued by a cookie), else the session cookie; null if neither.
 */
export async function principalFromRequest(req: Pick<Request, "headers">): Promise<Principal | null> {
  const header = req.headers.get("authorization");
  if (header) {
    const m = header.match(/^Bearer\s+(\S+)$/i);
    return m ? findTokenPrincipal(getPrisma(), m[1]) : null;
  }
  return principalFromSessionCookie(sessionCookieOf(req.headers.get("cookie")).sealed);
}
