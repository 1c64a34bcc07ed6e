import type { Role } from "./permissions";
import { getPrisma } from "../db/prisma";
import { findTokenPrincipal } from "./tokens";
import { SESSION_COOKIE, parseCookies, unsealSession } from "./cookies";
import { findActiveUser } from "./users";

export type Principal = {
  kind: "token" | "user" | "system";
  id: string;
  role: Role;
  /** How the principal appears in audit rows: "token:<name>", "user:<email>", "system". */
  actor: string;
  /** Users only. */
  email?: string;
  /** Users only: the CSRF token bound to this session (lib/auth/csrf.ts). */
  csrf?: string;
};

export const SYSTEM: Principal = { kind: "system", id: "system", role: "admin", actor: "system" };

/** The signed-in user of a sealed session cookie value; null if none, invalid, or the user is gone or disabled. */
export async function principalFromSessionCookie(sealed: string | undefined | null): Promise<Principal | null> {
  const session = await unsealSession(sealed);
  if (!session) return null;
  const user = await findActiveUser(getPrisma(), session.uid);
  if (!user) return null;
  return { kind: "user", id: user.id, role: user.role as Role, actor: `user:${user.email}`, email: user.email, csrf: session.csrf };
}

/**
 * The caller of an API request: `Authorization: Bearer <token>` if present
 * (a bad token is not rescued by a cookie), else the session cookie; null if neither.
 */
export async function principalFromRequest(req: Request): Promise<Principal | null> {
  const header = req.headers.get("authorization");
  if (header) {
    const m = header.match(/^Bearer\s+(\S+)$/i);
    return m ? findTokenPrincipal(getPrisma(), m[1]) : null;
  }
  return principalFromSessionCookie(parseCookies(req.headers.get("cookie"))[SESSION_COOKIE]);
}
