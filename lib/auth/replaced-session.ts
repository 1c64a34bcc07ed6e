// A browser holds one session at a time: signing a person in or opening a portal link takes the place of the one it
// had. The replaced session ends in the database as its sign-out would end it, not only in this browser's cookie jar,
// so no copy of its cookie (another tab's, a stolen one) outlives the moment this browser moved on.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { revokePortalSession } from "../portal/portal-sessions";
import type { Principal } from "./principal";
import { bumpSessionVersion } from "./users";

/**
 * Ends `replaced`, the live session a browser held, now that `by` took its place there. A person's session ends as
 * signing out ends it (the user's session version moves: every session of that user, in any browser); a portal's is
 * revoked, audited as the portal with `replacedBy` (in its district's audit trail: never the name of whoever came
 * next). A person signing in again as themselves keeps their other sessions: nothing of anyone else's was replaced.
 */
export async function endReplacedSession(
  prisma: PrismaClient,
  replaced: Principal | null,
  by: { kind: "sign-in"; userId: string } | { kind: "portal"; portalId: string },
): Promise<void> {
  if (replaced?.kind === "user") {
    if (by.kind === "sign-in" && by.userId === replaced.id) return;
    await bumpSessionVersion(prisma, replaced.id);
  }
  if (replaced?.kind === "portal") {
    if (by.kind === "portal" && by.portalId === replaced.id) return;
    await revokePortalSession(prisma, replaced.id, replaced, { replacedBy: by.kind });
  }
}
