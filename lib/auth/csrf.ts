// CSRF defence for cookie-authenticated mutations (bearer-token calls carry no
// ambient credential and need none):
//  1. the browser says the request is same-origin (Sec-Fetch-Site, else Origin);
//  2. double submit: the `x-hookledger-csrf` header equals the readable
//     `hl_csrf` cookie and the token sealed in the session itself, so a cookie
//     planted by a sibling subdomain cannot forge it.
// A cross-site HTML form can set neither the header nor a same-origin Origin.
import "server-only";
import { timingSafeEqual } from "node:crypto";
import { AppError } from "../errors";
import { CSRF_COOKIE, CSRF_HEADER, parseCookies } from "./cookies";

export const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The host the browser addressed (a reverse proxy may pass it as x-forwarded-host). */
type Req = Pick<Request, "headers" | "url">;

function requestHost(req: Req): string {
  return (req.headers.get("x-forwarded-host")?.split(",")[0].trim() || req.headers.get("host") || new URL(req.url).host).toLowerCase();
}

/** Throws 403 unless the browser marks the request as coming from our own origin. */
export function assertSameOrigin(req: Req): void {
  const site = req.headers.get("sec-fetch-site");
  if (site && site !== "same-origin")
    throw new AppError("forbidden", `Cross-site request refused (Sec-Fetch-Site: ${site}). Use the dashboard, or call the API with a bearer token.`);
  const origin = req.headers.get("origin");
  if (origin) {
    let host: string | null = null;
    try {
      host = origin === "null" ? null : new URL(origin).host.toLowerCase();
    } catch {
      host = null;
    }
    if (host !== requestHost(req))
      throw new AppError("forbidden", `Cross-origin request refused (Origin: ${origin}). Use the dashboard, or call the API with a bearer token.`);
  }
}

/** For a cookie-authenticated, state-changing request: same origin and a matching CSRF token. */
export function assertCsrf(req: Req, sessionCsrf: string): void {
  assertSameOrigin(req);
  const header = req.headers.get(CSRF_HEADER) ?? "";
  const cookie = parseCookies(req.headers.get("cookie"))[CSRF_COOKIE] ?? "";
  if (!header || !same(header, cookie) || !same(header, sessionCsrf))
    throw new AppError(
      "forbidden",
      `Missing or wrong CSRF token: send the ${CSRF_HEADER} header with the value of the ${CSRF_COOKIE} cookie (lib/client/api.ts does), or reload the page and sign in again.`,
    );
}
