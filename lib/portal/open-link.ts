// /portal/open: the district's browser spends its link here (app/portal/open/route.ts), in two steps.
//   GET ?token=…   checks the link without spending it and answers a small page whose form POSTs the token back (a
//                  script submits it at once; the button is there without scripts). Mail systems fetch the links in
//                  the messages they carry (link scanning) before their person clicks; a GET that spent the link left
//                  the person "already used".
//   POST token=…   spends it: the portal session cookie and a redirect to the dashboard (or the link's one subscription).
// Opening a link replaces the browser's session, and ends it in the database (lib/auth/replaced-session.ts): a copy of
// its cookie stops working too. When the browser already holds a live one that the link would end (a person's, say the
// admin who minted the link and clicks it to try it, or another district's, subscription's or access level's portal),
// the page names it and waits for a click instead of submitting itself; its button sends replace=1. A POST without
// replace=1 that would end such a session spends nothing and answers that same page: an old copy of the page, or
// another site's form, cannot sign anyone out unasked.
// A link that would not open gets no session and the sign-in page's one line saying why, at either step
// (app/(auth)/signin/portal-notice.tsx).
import "server-only";
import { getPrisma } from "../db/prisma";
import { clearSessionCookies, isSecureRequest, portalSessionSetCookies, sessionCookieOf } from "../auth/cookies";
import { principalFromSessionCookie, type Principal } from "../auth/principal";
import { endReplacedSession } from "../auth/replaced-session";
import { hostRefusal, misdirectedResponse } from "../auth/host";
import { portalFramingConfigured } from "./frame-ancestors";
import { PORTAL_OPEN_PATH, checkPortalLink, openPortalLink, portalScopeNames } from "./portal-sessions";

/** A form body larger than this is not a link's (the token is 75 characters). */
const MAX_FORM_BYTES = 2048;

/** Every answer here: never cached, and the address that brought the browser carries the token, so no Referer leaves. */
const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer", "x-robots-tag": "noindex" };

function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, ...PRIVATE });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/** What a page prints of a person's or a district's words: the page is written by hand, not by React. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

type ScopeNames = { district: string; subscription: string | null };

/** A portal's scope in words: "Lincoln Unified", or "Lincoln Unified (its subscription Lincoln SIS only)" for a one-subscription link. */
function scopeWords(names: ScopeNames): string {
  const district = `<strong>${escapeHtml(names.district)}</strong>`;
  return names.subscription ? `${district} (its subscription <strong>${escapeHtml(names.subscription)}</strong> only)` : district;
}

/** A portal's access level in words. */
const levelWords = (readOnly: boolean) => (readOnly ? "read-only" : "with changes allowed");

type LinkScope = { tenant: string; subscriptionId: string | null; readOnly: boolean };
type PortalView = { names: ScopeNames; readOnly: boolean };

/** The live session this browser holds that opening the link would end (null when none, or the same portal's), and what the link opens. */
type Occupant = ({ kind: "user"; email: string; role: string } | ({ kind: "portal"; sameScope: boolean } & PortalView)) & { link: PortalView };

/** The live session (a person's or a portal's) this browser holds; null when none, or when it sent two (lib/auth/cookies.ts). */
async function heldSession(req: Request): Promise<Principal | null> {
  const viewer = await principalFromSessionCookie(sessionCookieOf(req.headers.get("cookie")).sealed);
  return viewer?.kind === "user" || viewer?.kind === "portal" ? viewer : null;
}

async function occupantOf(viewer: Principal | null, link: LinkScope): Promise<Occupant | null> {
  if (!viewer) return null;
  const sameScope = viewer.kind === "portal" && viewer.tenantId === link.tenant && (viewer.subscriptionId ?? null) === link.subscriptionId;
  // The same district's portal for the same scope at the same access level: the link opens what the browser has already.
  // Another level is another portal: a session that may make changes does not become read-only (or the reverse) unasked.
  if (sameScope && (viewer.role === "support") === link.readOnly) return null;
  const prisma = getPrisma();
  const linkView = { names: await portalScopeNames(prisma, link), readOnly: link.readOnly };
  if (viewer.kind === "user") return { kind: "user", email: viewer.email ?? viewer.actor.replace(/^user:/, ""), role: viewer.role, link: linkView };
  const names = await portalScopeNames(prisma, { tenant: viewer.tenantId!, subscriptionId: viewer.subscriptionId ?? null });
  return { kind: "portal", sameScope, names, readOnly: viewer.role === "support", link: linkView };
}

const STYLE = `<style>
  :root { color-scheme: light dark; font-family: ui-sans-serif, system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
  main { max-width: 24rem; padding: 2rem 1.5rem; }
  h1 { font-size: 1.5rem; margin: 0 0 0.75rem; }
  p { margin: 0 0 1.25rem; line-height: 1.5; overflow-wrap: anywhere; }
  form { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: center; }
  button, a.back { font: inherit; font-weight: 600; padding: 0.6rem 1.1rem; border-radius: 0.375rem; cursor: pointer; }
  button { border: 0; background: #1d4ed8; color: #fff; }
  a.back { border: 1px solid currentColor; color: inherit; text-decoration: none; }
  button:focus-visible, a.back:focus-visible { outline: 2px solid #1d4ed8; outline-offset: 2px; }
</style>`;

function htmlPage(body: string, script = ""): Response {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>District portal · hookledger</title>
${STYLE}
</head>
<body>
<main>
${body}
</main>
${script}
</body>
</html>
`;
  return new Response(html, { status: 200, headers: { "content-type": "text/html; charset=utf-8", ...PRIVATE } });
}

/** The form that spends the link; the token is base64url (verifyPortalLink), safe in an attribute as it is. */
function openForm(token: string, button: string, opts: { replace?: boolean; back?: string } = {}): string {
  return `<form id="open" method="post" action="${PORTAL_OPEN_PATH}">
<input type="hidden" name="token" value="${token}">${opts.replace ? `\n<input type="hidden" name="replace" value="1">` : ""}
<button type="submit">${button}</button>${opts.back ? `\n<a class="back" href="/">${opts.back}</a>` : ""}
</form>`;
}

/**
 * The page a GET of a good link answers. The nonce is the one proxy.ts put in this request's Content-Security-Policy,
 * so only this page's own script runs.
 */
function openPage(token: string, nonce: string | null): Response {
  const script = nonce && /^[A-Za-z0-9+/=]+$/.test(nonce) ? `<script nonce="${nonce}">document.getElementById("open").submit()</script>` : "";
  return htmlPage(
    `<h1>District portal</h1>
<p>This link signs this browser in to your district's webhooks portal. It opens once.</p>
${openForm(token, "Open the portal")}`,
    script,
  );
}

/**
 * The page for a browser that holds a session the link would end: who is signed in, what opening the link does, and
 * the choice. No script: nothing happens until a click.
 */
function replacePage(token: string, occupant: Occupant): Response {
  const back = occupant.kind === "user" ? "Back to the dashboard" : `Back to the portal of ${escapeHtml(occupant.names.district)}`;
  return htmlPage(`${occupantWords(occupant)}
${openForm(token, "Sign out and open the portal", { replace: true, back })}`);
}

/** Who holds this browser and what the link would do to it. Access levels are named when the two portals' differ. */
function occupantWords(occupant: Occupant): string {
  if (occupant.kind === "user")
    return `<h1>You are signed in here</h1>
<p>You are signed in to hookledger as <strong>${escapeHtml(occupant.email)}</strong> (${escapeHtml(occupant.role)}).</p>
<p>This link opens the district portal of ${scopeWords(occupant.link.names)}, and signs you out of hookledger, as signing out does: in every browser. To stay signed in and open the portal too, open the link in a private window instead.</p>`;
  const levels = occupant.readOnly !== occupant.link.readOnly;
  const held = `This browser has the portal of ${scopeWords(occupant.names)} open${levels ? `, ${levelWords(occupant.readOnly)}` : ""}.`;
  if (occupant.sameScope)
    return `<h1>This portal is open here ${levelWords(occupant.readOnly)}</h1>
<p>${held}</p>
<p>This link opens it ${levelWords(occupant.link.readOnly)}, and signs the open one out. To keep both, open the link in a private window instead.</p>`;
  return `<h1>Another portal is open here</h1>
<p>${held}</p>
<p>This link opens the portal of ${scopeWords(occupant.link.names)}${levels ? ` ${levelWords(occupant.link.readOnly)}` : ""}, and signs the other one out. To keep both, open the link in a private window instead.</p>`;
}

/** GET: whether the link would open, nothing spent; and whether it would end a session this browser holds. */
export async function handlePortalOpen(req: Request): Promise<Response> {
  const refusal = hostRefusal(req.headers);
  if (refusal) return misdirectedResponse(refusal, false);
  const token = new URL(req.url).searchParams.get("token");
  const checked = await checkPortalLink(getPrisma(), token);
  if (!checked.ok) return redirect(`/signin?portal=${checked.reason}`);
  const occupant = await occupantOf(await heldSession(req), checked);
  if (occupant) return replacePage(token!, occupant);
  return openPage(token!, req.headers.get("x-nonce"));
}

/** The fields of a POSTed form, or null for any other body. */
async function formFields(req: Request): Promise<{ token: string | null; replace: boolean } | null> {
  if (!req.headers.get("content-type")?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  if (Number(req.headers.get("content-length") ?? 0) > MAX_FORM_BYTES) return null;
  const body = await req.text();
  if (body.length > MAX_FORM_BYTES) return null;
  const form = new URLSearchParams(body);
  return { token: form.get("token"), replace: form.get("replace") === "1" };
}

/** POST: spends the link, unless it would end a session this browser holds and the form did not say replace=1. */
export async function handlePortalOpenPost(req: Request): Promise<Response> {
  const refusal = hostRefusal(req.headers);
  if (refusal) return misdirectedResponse(refusal, false);
  const form = await formFields(req);
  const token = form?.token ?? null;
  const held = await heldSession(req);
  if (form && !form.replace) {
    const checked = await checkPortalLink(getPrisma(), token);
    if (!checked.ok) return redirect(`/signin?portal=${checked.reason}`);
    const occupant = await occupantOf(held, checked);
    if (occupant) return replacePage(token!, occupant);
  }
  const opened = await openPortalLink(getPrisma(), token);
  if (!opened.ok) return redirect(`/signin?portal=${opened.reason}`);
  const s = opened.session;
  // Only once the link is spent: a link that does not open changes nothing.
  await endReplacedSession(getPrisma(), held, { kind: "portal", portalId: s.id });
  const secure = isSecureRequest(req);
  const framed = portalFramingConfigured();
  const cookies = await portalSessionSetCookies(s.id, { expiresAt: s.expiresAt, secure, framed });
  // A framed portal's cookies are Partitioned: browsers keep them beside, not instead of, an unpartitioned cookie of the
  // same name (and an unframed portal's beside a partitioned one left from framing), so the other form is removed.
  cookies.unshift(...clearSessionCookies(secure, !framed));
  return redirect(s.subscriptionId ? `/subscriptions/${encodeURIComponent(s.subscriptionId)}` : "/", cookies);
}
