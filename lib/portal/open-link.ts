// GET /portal/open?token=…: the district's browser spends its link here (app/portal/open/route.ts). A good link gets
// the portal session cookie and goes to the dashboard (or its one subscription); any other gets no session and the
// sign-in page's one line saying why (app/(auth)/signin/portal-notice.tsx).
import "server-only";
import { getPrisma } from "../db/prisma";
import { isSecureRequest, portalSessionSetCookies } from "../auth/cookies";
import { hostRefusal, misdirectedResponse } from "../auth/host";
import { portalFramingConfigured } from "./frame-ancestors";
import { openPortalLink } from "./portal-sessions";

function redirect(location: string, cookies: string[] = []): Response {
  // no-referrer: the address that brought the browser here carries the token.
  const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

export async function handlePortalOpen(req: Request): Promise<Response> {
  const refusal = hostRefusal(req.headers);
  if (refusal) return misdirectedResponse(refusal, false);
  const token = new URL(req.url).searchParams.get("token");
  const opened = await openPortalLink(getPrisma(), token);
  if (!opened.ok) return redirect(`/signin?portal=${opened.reason}`);
  const s = opened.session;
  const cookies = await portalSessionSetCookies(s.id, { expiresAt: s.expiresAt, secure: isSecureRequest(req), framed: portalFramingConfigured() });
  return redirect(s.subscriptionId ? `/subscriptions/${encodeURIComponent(s.subscriptionId)}` : "/", cookies);
}
