import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreatePortalSession } from "@/lib/portal/portal-input";
import { createPortalSession, portalLinkOrigin } from "@/lib/portal/portal-sessions";

export const dynamic = "force-dynamic";

/** Mints a district portal link: `{tenant, subscriptionId?, readOnly?, expiresInSeconds?}` → 201 `{id, url, expiresAt, …}`. */
export const POST = apiRoute("portal.sessions.create", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreatePortalSession);
  return json(await createPortalSession(getPrisma(), value, principal, portalLinkOrigin(req)), 201, { "cache-control": "no-store" });
});
