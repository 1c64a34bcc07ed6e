// Next 16's proxy (formerly middleware): nothing but the sign-in page, the auth
// endpoints, health and metrics is served without a valid session cookie.
// /api/v1 authenticates each call itself (bearer token or session, in
// lib/api/handler.ts), so it answers 401 JSON rather than a redirect.
// The proxy checks the cookie's seal only; pages re-check the user in the
// database through getViewer()/requireViewer() (lib/auth/session.ts). Both, and
// the API, find the cookie by one rule (sessionCookieOf, lib/auth/cookies.ts):
// a browser sending two session cookies has none, and is told to drop both.
// Every answer that passes here gets a Content-Security-Policy with a fresh
// nonce (lib/auth/headers.ts), and HSTS when it was served over https. Pages
// served to a district portal session, the link's own answer and the sign-in
// page's portal notice may be framed by HOOKLEDGER_PORTAL_FRAME_ANCESTORS
// (lib/portal/frame-ancestors.ts) and carry no X-Frame-Options; everything else
// keeps frame-ancestors 'none' and X-Frame-Options: DENY.
// Everything here answers only to a Host the dashboard is known by (DNS
// rebinding; lib/auth/host.ts): 421 otherwise, before anything else.
// An address holding U+0000 (%00) is a 400 before any page runs: PostgreSQL
// stores and compares no NUL, so no path or query value may hold one
// (lib/errors.ts nulInAddress; /api/v1 checks its own, in apiRoute).
import { NextResponse, type NextRequest } from "next/server";
import { clearEverySessionCookie, sessionCookieOf, unsealSession } from "./lib/auth/cookies";
import { HSTS, X_FRAME_OPTIONS_DENY, newNonce, pageContentSecurityPolicy, servedOverHttps } from "./lib/auth/headers";
import { hostRefusal, misdirectedResponse } from "./lib/auth/host";
import { nulInAddress } from "./lib/errors";
import { metricsTokenAccepts } from "./lib/metrics/token";
import { portalFrameAncestors } from "./lib/portal/frame-ancestors";

const PUBLIC = [/^\/signin(\/|$)/, /^\/api\/auth\//, /^\/api\/health$/, /^\/metrics$/, /^\/api\/v1(\/|$)/, /^\/portal\/open$/];

/** Scrapers and health checks address the dashboard by whatever name they were given; the metrics token vouches for them. */
const MACHINE = /^\/(metrics|api\/health)$/;

export async function proxy(req: NextRequest) {
  const refusal = hostRefusal(req.headers);
  if (refusal && !(MACHINE.test(req.nextUrl.pathname) && metricsTokenAccepts(req.headers.get("authorization"))))
    return misdirectedResponse(refusal, req.nextUrl.pathname.startsWith("/api/"));
  const { pathname, search } = req.nextUrl;
  // The Cookie header by the rule every reader follows (lib/auth/cookies.ts), not req.cookies, which keeps the last of
  // two same-named cookies where the API would take the first.
  const { sealed, ambiguous } = sessionCookieOf(req.headers.get("cookie"));
  const session = await unsealSession(sealed);
  // The sign-in page is frameable only as the portal's notice, which shows no password form (no clickjacking of it).
  const portalFrame = Boolean(session?.portal) || pathname === "/portal/open" || (pathname === "/signin" && req.nextUrl.searchParams.has("portal"));
  const nonce = newNonce();
  const ancestors = portalFrame ? portalFrameAncestors() : [];
  const csp = pageContentSecurityPolicy(nonce, undefined, ancestors);
  const secure = servedOverHttps(req.headers, req.url);
  const finish = (res: NextResponse) => {
    res.headers.set("content-security-policy", csp);
    if (ancestors.length === 0) res.headers.set(X_FRAME_OPTIONS_DENY.key, X_FRAME_OPTIONS_DENY.value);
    if (secure) res.headers.set("strict-transport-security", HSTS);
    // Two session cookies are no session: both go, so the browser is plainly signed out. Not on the portal link's
    // answer, which sets its own session cookie and clears the other form itself (lib/portal/open-link.ts).
    if (ambiguous && pathname !== "/portal/open") for (const c of clearEverySessionCookie(secure)) res.headers.append("set-cookie", c);
    return res;
  };
  // Next takes the nonce for its inline scripts from the request's CSP header.
  const pass = () => {
    const headers = new Headers(req.headers);
    headers.set("content-security-policy", csp);
    headers.set("x-nonce", nonce);
    return finish(NextResponse.next({ request: { headers } }));
  };

  const nul = nulInAddress(req.url);
  if (nul) {
    const res = pathname.startsWith("/api/")
      ? NextResponse.json({ error: nul.toApi() }, { status: nul.status })
      : new NextResponse(`Bad request: ${nul.message}. Remove it from the address and try again.\n`, {
          status: nul.status,
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
    return finish(res);
  }

  if (PUBLIC.some((re) => re.test(pathname))) return pass();
  // A password an admin set: nothing but the password page until it is changed
  // (the API refuses such sessions itself, from the database's flag).
  if (session?.pwc && !pathname.startsWith("/api/") && pathname !== "/password") {
    const url = req.nextUrl.clone();
    url.pathname = "/password";
    url.search = "";
    return finish(NextResponse.redirect(url));
  }
  if (session) return pass();
  if (pathname.startsWith("/api/")) return finish(NextResponse.json({ error: { code: "unauthorized", message: "Sign in first.", details: null } }, { status: 401 }));
  const url = req.nextUrl.clone();
  url.pathname = "/signin";
  url.search = pathname === "/" ? "" : `?next=${encodeURIComponent(pathname + search)}`;
  return finish(NextResponse.redirect(url));
}

export const config = {
  // Static assets need no session; /api/v1 authenticates each call itself, so the
  // proxy would only pass it through (skipping it: ingest through next start
  // measured 819–859 events/s against 568/s; BENCHMARKS.md F5).
  // /api/auth/ is skipped too: a request that passes through the proxy has its
  // body buffered by Next (so it can be read twice), which would undo the sign-in
  // route's streamed 8 KB limit; those routes check the session themselves.
  matcher: ["/((?!_next/static|_next/image|favicon.ico|robots.txt|api/v1/|api/auth/).*)"],
};
