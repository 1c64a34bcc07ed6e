// Security headers. Pages get their Content-Security-Policy from proxy.ts with
// a fresh nonce per request: Next reads the nonce from the request's CSP header
// and puts it on its own inline bootstrap scripts, so script-src needs no
// 'unsafe-inline' (every page is rendered per request already). Styles keep
// 'unsafe-inline' for the charts' style attributes; a style cannot run code.
// Everything proxy.ts does not see (/api/v1) gets the fixed headers from
// next.config.ts.

/**
 * A CSP for HTML pages: scripts only with this request's nonce (and what they load: 'strict-dynamic'). `frameAncestors`:
 * the sites that may frame this answer (a district portal's pages, lib/portal/frame-ancestors.ts); none by default.
 */
export function pageContentSecurityPolicy(nonce: string, dev = process.env.NODE_ENV === "development", frameAncestors: readonly string[] = []): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    frameAncestors.length ? `frame-ancestors 'self' ${frameAncestors.join(" ")}` : "frame-ancestors 'none'",
  ].join("; ");
}

/** For JSON and text answers: nothing may load, nothing may frame them. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** One year; no includeSubDomains or preload, which would bind hosts hookledger does not own. */
export const HSTS = "max-age=31536000";

/**
 * X-Frame-Options for what may never be framed: the API's answers (next.config.ts) and every page but a district
 * portal's (proxy.ts). A portal page that HOOKLEDGER_PORTAL_FRAME_ANCESTORS lets the SaaS frame carries none, so
 * that no header says DENY beside a frame-ancestors that allows it.
 */
export const X_FRAME_OPTIONS_DENY = { key: "X-Frame-Options", value: "DENY" };

/** Headers that do not vary per request (Referrer: same-origin, because dashboard URLs carry student and event ids). */
export const STATIC_SECURITY_HEADERS: { key: string; value: string }[] = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "same-origin" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
];

/** A base64 nonce of 128 random bits (Web Crypto: the proxy may run outside Node). */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * HTTPS as the browser saw it: x-forwarded-proto from the TLS proxy in front
 * (hookledger trusts the nearest proxy's headers, like isSecureRequest), else
 * the request URL's scheme.
 */
export function servedOverHttps(headers: Headers, url: string): boolean {
  const proto = headers.get("x-forwarded-proto")?.split(",")[0].trim().toLowerCase();
  if (proto) return proto === "https";
  return url.startsWith("https:");
}
