// Session cookies, sealed with iron-session (AES-256-CBC + HMAC under a key
// derived from HOOKLEDGER_SECRET_KEY). Framework-free on purpose: the API
// handler, the proxy and server components all read the same cookie header.
import "server-only";
import { randomBytes } from "node:crypto";
import { sealData, unsealData } from "iron-session";
import { sessionPassword } from "./keys";

export const SESSION_COOKIE = "hl_session";
/** Readable by our page's script, echoed in CSRF_HEADER on every mutation (double submit). */
export const CSRF_COOKIE = "hl_csrf";
export const CSRF_HEADER = "x-hookledger-csrf";
/** A session lasts 12 hours from sign-in: a working day, not a week. */
const SESSION_TTL_SECONDS = 12 * 3600;

/**
 * `ver` is the user's session_version when the session was issued: bumping the
 * version (sign-out, disable, role or password change) ends every older
 * session. `pwc` marks a session that must change its password first.
 */
export type SessionData = {
  uid: string;
  csrf: string;
  iat: number;
  ver: number;
  pwc?: boolean;
  /** A district portal session's id (lib/portal): no user. */
  portal?: string;
};

export function parseCookies(header: string | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    if (!k || k in out) continue;
    try {
      out[k] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      out[k] = part.slice(i + 1).trim();
    }
  }
  return out;
}

/**
 * The sealed session a request's Cookie header carries, by the one rule the proxy, the API and server components all
 * follow (each reads it through here, never by the cookie's name). A browser can hold two `hl_session` cookies: a
 * framed portal's is Partitioned (lib/portal/frame-ancestors.ts) and sits beside, not instead of, an unpartitioned
 * one. The header tells neither which is which nor which is newer, and parsers disagree on which of two to take
 * (parseCookies the first, Next's request cookies the last). So two different values are no session at all
 * (`ambiguous`): neither a stale copy nor one planted by a sibling site decides who the request acts as, and the
 * answer clears both forms (clearEverySessionCookie). Signing in and opening a portal clear the other form, so only a
 * browser that held both before that rule keeps such a pair, until its next request.
 */
export function sessionCookieOf(header: string | null | undefined): { sealed: string | null; ambiguous: boolean } {
  const values = new Set<string>();
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i < 0 || part.slice(0, i).trim() !== SESSION_COOKIE) continue;
    const raw = part.slice(i + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // Kept as sent: the seal check refuses it.
    }
    if (value) values.add(value);
  }
  if (values.size > 1) return { sealed: null, ambiguous: true };
  return { sealed: values.values().next().value ?? null, ambiguous: false };
}

export function newSession(uid: string, ver = 0, opts: { mustChangePassword?: boolean } = {}): SessionData {
  return { uid, csrf: randomBytes(24).toString("base64url"), iat: Math.floor(Date.now() / 1000), ver, ...(opts.mustChangePassword ? { pwc: true } : {}) };
}

export async function sealSession(data: SessionData): Promise<string> {
  return sealData(data, { password: sessionPassword(), ttl: SESSION_TTL_SECONDS });
}

/** The session in a sealed cookie value; null if absent, forged, expired or sealed under another key. */
export async function unsealSession(sealed: string | undefined | null): Promise<SessionData | null> {
  if (!sealed) return null;
  try {
    const data = await unsealData<Partial<SessionData>>(sealed, { password: sessionPassword(), ttl: SESSION_TTL_SECONDS });
    // A cookie without a version predates revocable sessions: no session.
    if (typeof data?.uid !== "string" || typeof data.csrf !== "string" || typeof data.ver !== "number") return null;
    return data as SessionData;
  } catch {
    return null;
  }
}

/** HTTPS as the browser saw it (directly or through a proxy that sets x-forwarded-proto). */
export function isSecureRequest(req: Pick<Request, "headers" | "url">): boolean {
  const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim();
  if (proto) return proto === "https";
  return new URL(req.url).protocol === "https:";
}

/** `framed`: for a district portal inside another site's frame (lib/portal). */
type CookieOptions = { httpOnly: boolean; secure: boolean; maxAge: number; framed?: boolean };

function cookie(name: string, value: string, opts: CookieOptions): string {
  // A framed portal's cookies travel in a cross-site frame: SameSite=None (which requires Secure), partitioned by the
  // framing site so browsers that block third-party cookies still keep them for that frame.
  const site = opts.framed ? ["SameSite=None", "Secure", "Partitioned"] : ["SameSite=Lax", opts.secure ? "Secure" : ""];
  return [`${name}=${encodeURIComponent(value)}`, "Path=/", `Max-Age=${opts.maxAge}`, ...site, opts.httpOnly ? "HttpOnly" : ""].filter(Boolean).join("; ");
}

/** Set-Cookie values for a new session: the sealed session (httpOnly) and the CSRF token (readable). */
export async function sessionSetCookies(data: SessionData, secure: boolean): Promise<string[]> {
  return [
    cookie(SESSION_COOKIE, await sealSession(data), { httpOnly: true, secure, maxAge: SESSION_TTL_SECONDS }),
    cookie(CSRF_COOKIE, data.csrf, { httpOnly: false, secure, maxAge: SESSION_TTL_SECONDS }),
  ];
}

/**
 * Set-Cookie values for a district portal session that ends at `expiresAt`. The session's row decides (lib/portal);
 * the cookie outlives it by an hour so that a page opened after the end can say the session ended, rather than
 * show a password form the portal's frame may not display.
 */
export async function portalSessionSetCookies(portalId: string, opts: { expiresAt: Date; secure: boolean; framed: boolean }): Promise<string[]> {
  const data: SessionData = { ...newSession(""), portal: portalId };
  const maxAge = Math.max(1, Math.floor((opts.expiresAt.getTime() - Date.now()) / 1000)) + 3600;
  const sealed = await sealData(data, { password: sessionPassword(), ttl: maxAge });
  return [
    cookie(SESSION_COOKIE, sealed, { httpOnly: true, secure: opts.secure, maxAge, framed: opts.framed }),
    cookie(CSRF_COOKIE, data.csrf, { httpOnly: false, secure: opts.secure, maxAge, framed: opts.framed }),
  ];
}

/** Both forms of the session cookies, unpartitioned and partitioned: what a browser holding two of them is answered. */
export function clearEverySessionCookie(secure: boolean): string[] {
  return [...clearSessionCookies(secure), ...clearSessionCookies(secure, true)];
}

/** `framed`: the cookies were set for a framed portal, and only the same attributes remove them. */
export function clearSessionCookies(secure: boolean, framed = false): string[] {
  return [cookie(SESSION_COOKIE, "", { httpOnly: true, secure, maxAge: 0, framed }), cookie(CSRF_COOKIE, "", { httpOnly: false, secure, maxAge: 0, framed })];
}
