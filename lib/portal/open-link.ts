// /portal/open: the district's browser spends its link here (app/portal/open/route.ts), in two steps.
//   GET ?token=…   checks the link without spending it and answers a small page whose form POSTs the token back (a
//                  script submits it at once; the button is there without scripts). Mail systems fetch the links in
//                  the messages they carry (link scanning) before their person clicks; a GET that spent the link left
//                  the person "already used".
//   POST token=…   spends it: the portal session cookie and a redirect to the dashboard (or the link's one subscription).
// A link that would not open gets no session and the sign-in page's one line saying why, at either step
// (app/(auth)/signin/portal-notice.tsx).
import "server-only";
import { getPrisma } from "../db/prisma";
import { isSecureRequest, portalSessionSetCookies } from "../auth/cookies";
import { hostRefusal, misdirectedResponse } from "../auth/host";
import { portalFramingConfigured } from "./frame-ancestors";
import { PORTAL_OPEN_PATH, checkPortalLink, openPortalLink } from "./portal-sessions";

/** A form body larger than this is not a link's (the token is 75 characters). */
const MAX_FORM_BYTES = 2048;

/** Every answer here: never cached, and the address that brought the browser carries the token, so no Referer leaves. */
const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer", "x-robots-tag": "noindex" };

function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, ...PRIVATE });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/**
 * The page a GET of a good link answers. The nonce is the one proxy.ts put in this request's Content-Security-Policy,
 * so only this page's own script runs; the token is base64url (verifyPortalLink), safe in an attribute as it is.
 */
function openPage(token: string, nonce: string | null): Response {
  const script = nonce && /^[A-Za-z0-9+/=]+$/.test(nonce) ? `<script nonce="${nonce}">document.getElementById("open").submit()</script>` : "";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>District portal · hookledger</title>
<style>
  :root { color-scheme: light dark; font-family: ui-sans-serif, system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
  main { max-width: 24rem; padding: 2rem 1.5rem; }
  h1 { font-size: 1.5rem; margin: 0 0 0.75rem; }
  p { margin: 0 0 1.25rem; line-height: 1.5; }
  button { font: inherit; font-weight: 600; padding: 0.6rem 1.1rem; border: 0; border-radius: 0.375rem; background: #1d4ed8; color: #fff; cursor: pointer; }
  button:focus-visible { outline: 2px solid #1d4ed8; outline-offset: 2px; }
</style>
</head>
<body>
<main>
<h1>District portal</h1>
<p>This link signs this browser in to your district's webhooks portal. It opens once.</p>
<form id="open" method="post" action="${PORTAL_OPEN_PATH}">
<input type="hidden" name="token" value="${token}">
<button type="submit">Open the portal</button>
</form>
</main>
${script}
</body>
</html>
`;
  return new Response(html, { status: 200, headers: { "content-type": "text/html; charset=utf-8", ...PRIVATE } });
}

/** GET: whether the link would open, nothing spent. */
export async function handlePortalOpen(req: Request): Promise<Response> {
  const refusal = hostRefusal(req.headers);
  if (refusal) return misdirectedResponse(refusal, false);
  const token = new URL(req.url).searchParams.get("token");
  const checked = await checkPortalLink(getPrisma(), token);
  if (!checked.ok) return redirect(`/signin?portal=${checked.reason}`);
  return openPage(token!, req.headers.get("x-nonce"));
}

/** The token of a POSTed form, or null for any other body. */
async function formToken(req: Request): Promise<string | null> {
  if (!req.headers.get("content-type")?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  if (Number(req.headers.get("content-length") ?? 0) > MAX_FORM_BYTES) return null;
  const body = await req.text();
  if (body.length > MAX_FORM_BYTES) return null;
  return new URLSearchParams(body).get("token");
}

/** POST: spends the link. */
export async function handlePortalOpenPost(req: Request): Promise<Response> {
  const refusal = hostRefusal(req.headers);
  if (refusal) return misdirectedResponse(refusal, false);
  const opened = await openPortalLink(getPrisma(), await formToken(req));
  if (!opened.ok) return redirect(`/signin?portal=${opened.reason}`);
  const s = opened.session;
  const cookies = await portalSessionSetCookies(s.id, { expiresAt: s.expiresAt, secure: isSecureRequest(req), framed: portalFramingConfigured() });
  return redirect(s.subscriptionId ? `/subscriptions/${encodeURIComponent(s.subscriptionId)}` : "/", cookies);
}
