import { apiRoute, json } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { revokePortalSession } from "@/lib/portal/portal-sessions";

export const dynamic = "force-dynamic";

/** Revokes a portal link and ends the browser session opened from it: 200 `{id, revokedAt}`; 404 for an unknown id. */
export const DELETE = apiRoute("portal.sessions.revoke", async ({ params, principal }) => json(await revokePortalSession(getPrisma(), params.id, principal)));
