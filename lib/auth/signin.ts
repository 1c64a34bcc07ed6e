// Sign-in and sign-out as framework-free request handlers (app/api/auth/*
// exports them; tests call them in-process).
import { z } from "zod";
import { getPrisma } from "../db/prisma";
import { AppError } from "../errors";
import { toErrorResponse, json } from "../api/handler";
import { assertCsrf, assertSameOrigin } from "./csrf";
import { clearSessionCookies, isSecureRequest, newSession, sessionSetCookies } from "./cookies";
import { principalFromRequest } from "./principal";
import { verifyCredentials } from "./users";
import { assertSignInAllowed, clearSignInFailures, recordSignInFailure } from "./rate-limit";
import { ROLE_PERMISSIONS, can, type Permission } from "./permissions";

const ZSignIn = z.object({
  email: z.string().trim().toLowerCase().min(1, "enter your email").max(254),
  password: z.string().min(1, "enter your password").max(1024),
  next: z.string().max(2048).optional(),
});

/** Only a local path, so the sign-in form cannot be used as an open redirect. */
export function safeNext(next: string | undefined | null): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

/** The caller's address for the rate limit: the nearest proxy's x-forwarded-for entry, else x-real-ip. */
export function clientIp(req: Request): string {
  const xff = req.headers.get("x-forwarded-for");
  if (xff) return xff.split(",").pop()!.trim() || "unknown";
  return req.headers.get("x-real-ip") ?? "unknown";
}

async function readSignIn(req: Request) {
  const type = req.headers.get("content-type") ?? "";
  let raw: Record<string, unknown>;
  if (/^application\/x-www-form-urlencoded|^multipart\/form-data/i.test(type)) {
    raw = Object.fromEntries([...(await req.formData()).entries()].map(([k, v]) => [k, String(v)]));
  } else {
    try {
      raw = JSON.parse(await req.text());
    } catch {
      throw new AppError("invalid_json", "Send {\"email\", \"password\"} as JSON.");
    }
  }
  const r = ZSignIn.safeParse(raw);
  if (!r.success) throw new AppError("validation_failed", r.error.issues[0].message, r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
  return { ...r.data, isForm: !/json/i.test(type) };
}

export async function handleSignIn(req: Request): Promise<Response> {
  try {
    // Login CSRF: a foreign page must not sign the browser in as someone else.
    assertSameOrigin(req);
    const input = await readSignIn(req);
    const prisma = getPrisma();
    const ip = clientIp(req);
    await assertSignInAllowed(prisma, input.email, ip);
    const user = await verifyCredentials(prisma, input.email, input.password);
    if (!user) {
      await recordSignInFailure(prisma, input.email, ip);
      throw new AppError("unauthorized", "That email and password do not match a user. Check both, or ask an admin to create your user.");
    }
    await clearSignInFailures(prisma, input.email, ip);
    const cookies = await sessionSetCookies(newSession(user.id), isSecureRequest(req));
    const next = safeNext(input.next);
    const headers = new Headers({ "cache-control": "no-store" });
    for (const c of cookies) headers.append("set-cookie", c);
    if (input.isForm) {
      headers.set("location", next);
      return new Response(null, { status: 303, headers });
    }
    headers.set("content-type", "application/json; charset=utf-8");
    return new Response(JSON.stringify({ email: user.email, role: user.role, next }), { status: 200, headers });
  } catch (err) {
    return toErrorResponse(err);
  }
}

export async function handleSignOut(req: Request): Promise<Response> {
  try {
    const principal = await principalFromRequest(req);
    // Signing out is a mutation too: a foreign page must not be able to end the session.
    if (principal?.kind === "user") assertCsrf(req, principal.csrf ?? "");
    const headers = new Headers({ "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    for (const c of clearSessionCookies(isSecureRequest(req))) headers.append("set-cookie", c);
    return new Response(JSON.stringify({ signedOut: true }), { status: 200, headers });
  } catch (err) {
    return toErrorResponse(err);
  }
}

/** Who am I: email, role and the permissions the UI may use to hide buttons. */
export async function handleSession(req: Request): Promise<Response> {
  const p = await principalFromRequest(req);
  if (!p) return toErrorResponse(new AppError("unauthorized", "Not signed in."));
  const permissions = (Object.keys(ROLE_PERMISSIONS) as Permission[]).filter((k) => can(p.role, k));
  return json({ kind: p.kind, actor: p.actor, email: p.email ?? null, role: p.role, permissions }, 200, { "cache-control": "no-store" });
}
