// Sign-in and sign-out as framework-free request handlers (app/api/auth/*
// exports them; tests call them in-process).
import "server-only";
import { z } from "zod";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { AppError } from "../errors";
import { toErrorResponse, json, readBodyLimited } from "../api/handler";
import { assertCsrf, assertSameOrigin } from "./csrf";
import { clearEverySessionCookie, clearSessionCookies, isSecureRequest, newSession, sessionCookieOf, sessionSetCookies } from "./cookies";
import { principalFromRequest, principalFromSessionCookie } from "./principal";
import { endReplacedSession } from "./replaced-session";
import { bumpSessionVersion, changePassword, verifyCredentials } from "./users";
import { beginSignInAttempt, signInSucceeded, withdrawSignInAttempt } from "./rate-limit";
import { PASSWORD_HASH_RETRY_AFTER_SECONDS, PasswordHashingBusy, passwordHashingBusy } from "./password";
import { clientAddress } from "./proxies";
import { hostRefusal, misdirectedResponse } from "./host";
import { ROLE_PERMISSIONS, canAs, type Permission } from "./permissions";
import { revokePortalSession } from "../portal/portal-sessions";

const ZSignIn = z.object({
  email: z.string().trim().toLowerCase().min(1, "enter your email").max(254),
  password: z.string().min(1, "enter your password").max(1024),
  next: z.string().max(2048).optional(),
});

/** A fixed origin `next` is resolved against; only what stays on it is kept. */
const NEXT_ORIGIN = "http://hookledger.invalid";

/**
 * Only a local path, so the sign-in form cannot be used as an open redirect.
 * Prefix checks are not enough: URL parsers drop tab and newline and read `\`
 * as `/`, so `/\t/evil.example` becomes `//evil.example`. Resolving `next` the
 * way a browser will and keeping the serialised path, query and hash of a
 * same-origin result means the browser later resolves exactly what was checked.
 */
export function safeNext(next: string | undefined | null): string {
  if (!next) return "/";
  let url: URL;
  try {
    url = new URL(next, `${NEXT_ORIGIN}/`);
  } catch {
    return "/";
  }
  if (url.origin !== NEXT_ORIGIN) return "/";
  const local = url.pathname + url.search + url.hash;
  // `/..//evil` normalises to the path `//evil`, which as a Location is scheme-relative.
  return local.startsWith("/") && !local.startsWith("//") ? local : "/";
}

/**
 * Errors as answers, with the Retry-After a full password-hash queue asks for
 * (lib/api/handler.ts gives one to 429s only).
 */
function errorAnswer(err: unknown): Response {
  const res = toErrorResponse(err);
  if (err instanceof PasswordHashingBusy) res.headers.set("retry-after", String(PASSWORD_HASH_RETRY_AFTER_SECONDS));
  return res;
}

/** 421 unless the request names a host the dashboard answers to (DNS rebinding; lib/auth/host.ts). */
function misdirected(req: Request): Response | null {
  const refusal = hostRefusal(req.headers);
  return refusal ? misdirectedResponse(refusal, true) : null;
}

/**
 * The password check of a sign-in or a password change, counted by the
 * limiter: refused at once while the hash queue is full, and withdrawn if it
 * filled meanwhile, so a 503 is never a failure against the account.
 */
async function checkedAttempt<T>(prisma: PrismaClient, email: string, ip: string | null, check: () => Promise<T>): Promise<T> {
  if (passwordHashingBusy()) throw new PasswordHashingBusy();
  // Counted before the scrypt: a failure is already on record while the hash runs.
  const attempt = await beginSignInAttempt(prisma, email, ip);
  try {
    return await check();
  } catch (err) {
    if (err instanceof PasswordHashingBusy) await withdrawSignInAttempt(prisma, attempt);
    throw err;
  }
}

/** A sign-in body is an email, a password and a path: 8 KB is generous, and nothing larger is read. */
export const SIGN_IN_MAX_BODY_BYTES = 8 * 1024;

async function readSignIn(req: Request) {
  const type = req.headers.get("content-type") ?? "";
  const body = await readBodyLimited(req, SIGN_IN_MAX_BODY_BYTES);
  let raw: Record<string, unknown>;
  if (/^application\/x-www-form-urlencoded/i.test(type)) {
    raw = Object.fromEntries(new URLSearchParams(body.toString("utf8")));
  } else if (/^multipart\/form-data/i.test(type)) {
    // Parsed from the bytes already counted, never from the request stream.
    const form = await new Response(new Uint8Array(body), { headers: { "content-type": type } }).formData().catch(() => {
      throw new AppError("bad_request", "The form body could not be read.");
    });
    raw = Object.fromEntries([...form.entries()].map(([k, v]) => [k, String(v)]));
  } else {
    try {
      raw = JSON.parse(body.toString("utf8"));
    } catch {
      throw new AppError("invalid_json", 'Send {"email", "password"} as JSON.');
    }
    if (raw === null || typeof raw !== "object") throw new AppError("invalid_json", 'Send {"email", "password"} as JSON.');
  }
  const r = ZSignIn.safeParse(raw);
  if (!r.success)
    throw new AppError(
      "validation_failed",
      r.error.issues[0].message,
      r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
    );
  return { ...r.data, isForm: !/json/i.test(type) };
}

export async function handleSignIn(req: Request): Promise<Response> {
  const refused = misdirected(req);
  if (refused) return refused;
  try {
    // Login CSRF: a foreign page must not sign the browser in as someone else.
    assertSameOrigin(req);
    const input = await readSignIn(req);
    const prisma = getPrisma();
    const ip = clientAddress(req.headers);
    const user = await checkedAttempt(prisma, input.email, ip, () => verifyCredentials(prisma, input.email, input.password));
    if (!user) throw new AppError("unauthorized", "That email and password do not match a user. Check both, or ask an admin to create your user.");
    await signInSucceeded(prisma, input.email, ip);
    // The session this browser held (a district portal's, another person's) ends here, not only in this browser.
    await endReplacedSession(prisma, await principalFromSessionCookie(sessionCookieOf(req.headers.get("cookie")).sealed), { kind: "sign-in", userId: user.id });
    const secure = isSecureRequest(req);
    // A framed portal's cookie is Partitioned: the person's cookie would sit beside it, not replace it. Removed first.
    const cookies = [
      ...clearSessionCookies(secure, true),
      ...(await sessionSetCookies(newSession(user.id, user.sessionVersion, { mustChangePassword: user.mustChangePassword }), secure)),
    ];
    // A password an admin set is changed before anything else is served.
    const next = user.mustChangePassword ? `/password?next=${encodeURIComponent(safeNext(input.next))}` : safeNext(input.next);
    const headers = new Headers({ "cache-control": "no-store" });
    for (const c of cookies) headers.append("set-cookie", c);
    if (input.isForm) {
      headers.set("location", next);
      return new Response(null, { status: 303, headers });
    }
    headers.set("content-type", "application/json; charset=utf-8");
    return new Response(JSON.stringify({ email: user.email, role: user.role, next }), { status: 200, headers });
  } catch (err) {
    return errorAnswer(err);
  }
}

export async function handleSignOut(req: Request): Promise<Response> {
  const refused = misdirected(req);
  if (refused) return refused;
  try {
    const principal = await principalFromRequest(req);
    // Signing out is a mutation too: a foreign page must not be able to end the session.
    if (principal?.kind === "user") {
      assertCsrf(req, principal.csrf ?? "");
      // Sign-out is sign-out everywhere: the version moves, so this cookie (and
      // any copy of it, in any browser) stops working now, not in 12 hours.
      await bumpSessionVersion(getPrisma(), principal.id);
    }
    // A district signing out of its portal ends the session for good (the link is spent already).
    if (principal?.kind === "portal") {
      assertCsrf(req, principal.csrf ?? "");
      await revokePortalSession(getPrisma(), principal.id, principal);
    }
    const headers = new Headers({ "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    // Both forms, partitioned (a framed portal's) and not: whatever this browser held is gone.
    for (const c of clearEverySessionCookie(isSecureRequest(req))) headers.append("set-cookie", c);
    return new Response(JSON.stringify({ signedOut: true }), { status: 200, headers });
  } catch (err) {
    return toErrorResponse(err);
  }
}

/** Who am I: email, role and the permissions the UI may use to hide buttons. */
export async function handleSession(req: Request): Promise<Response> {
  const refused = misdirected(req);
  if (refused) return refused;
  const p = await principalFromRequest(req);
  if (!p) return toErrorResponse(new AppError("unauthorized", "Not signed in."));
  // The check the routes make (lib/api/handler.ts): a tenant's admin holds no global-only permission.
  const permissions = (Object.keys(ROLE_PERMISSIONS) as Permission[]).filter((k) => canAs(p, k));
  return json({ kind: p.kind, actor: p.actor, email: p.email ?? null, role: p.role, permissions }, 200, { "cache-control": "no-store" });
}

const ZPasswordChange = z.object({
  currentPassword: z.string().min(1, "enter your current password").max(1024),
  newPassword: z.string().max(1024),
  next: z.string().max(2048).optional(),
});

/**
 * The signed-in user's own password change (also the forced one after an
 * admin set the password). The current password is checked under the sign-in
 * rate limit; afterwards every other session ends and this browser gets a new
 * cookie under the new session version.
 */
export async function handlePasswordChange(req: Request): Promise<Response> {
  const refused = misdirected(req);
  if (refused) return refused;
  try {
    const principal = await principalFromRequest(req);
    if (!principal || principal.kind !== "user" || !principal.email) throw new AppError("unauthorized", "Sign in first.");
    assertCsrf(req, principal.csrf ?? "");
    const type = req.headers.get("content-type") ?? "";
    if (!/json/i.test(type)) throw new AppError("unsupported_media_type", `Send the body as application/json (got ${type || "nothing"}).`);
    let raw: unknown;
    try {
      raw = JSON.parse((await readBodyLimited(req, SIGN_IN_MAX_BODY_BYTES)).toString("utf8"));
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError("invalid_json", 'Send {"currentPassword", "newPassword"} as JSON.');
    }
    const r = ZPasswordChange.safeParse(raw);
    if (!r.success) throw new AppError("validation_failed", r.error.issues[0].message);
    const prisma = getPrisma();
    const ip = clientAddress(req.headers);
    const user = await checkedAttempt(prisma, principal.email, ip, () => changePassword(prisma, principal.id, r.data.currentPassword, r.data.newPassword));
    if (!user) throw new AppError("unauthorized", "The current password is not right.");
    await signInSucceeded(prisma, principal.email, ip);
    const headers = new Headers({ "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    for (const c of await sessionSetCookies(newSession(user.id, user.sessionVersion), isSecureRequest(req))) headers.append("set-cookie", c);
    return new Response(JSON.stringify({ changed: true, next: safeNext(r.data.next) }), { status: 200, headers });
  } catch (err) {
    return errorAnswer(err);
  }
}
