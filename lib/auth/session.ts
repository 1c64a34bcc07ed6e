// The signed-in viewer of a dashboard page, layout or server action.
//
//   const viewer = await getViewer();                         // Principal | null
//   const viewer = await requireViewer();                     // or redirect to /signin
//   const viewer = await requireViewer("deliveries.redrive"); // or the 403 page
//   can(viewer.role, "deliveries.redrive")                    // to hide a button
//
// Server actions: `await authorizeAction("subscriptions.pause")` throws an
// AppError (401/403) instead of redirecting. Next checks a server action's
// Origin against the Host itself, which is the CSRF defence for actions.
import "server-only";
import { cache } from "react";
import { headers } from "next/headers";
import { forbidden, redirect } from "next/navigation";
import { AppError } from "../errors";
import { can, canAs, confinedRefusal, roleRefusal, type Permission } from "./permissions";
import { principalFromSessionCookie, type Principal } from "./principal";
import { sessionCookieOf, unsealSession } from "./cookies";

// The Cookie header itself, not Next's cookie jar: the jar keeps the last of two same-named cookies, and every reader
// follows sessionCookieOf's one rule for them.
async function sealedSessionCookie(): Promise<string | null> {
  return sessionCookieOf((await headers()).get("cookie")).sealed;
}

/** The signed-in user (role, actor "user:<email>"), or null. Cached for the request. */
export const getViewer = cache(async (): Promise<Principal | null> => {
  return principalFromSessionCookie(await sealedSessionCookie());
});

/** For pages and layouts: the viewer, else a redirect to /signin; with a permission the viewer lacks, the 403 page. */
export async function requireViewer(permission?: Permission): Promise<Principal> {
  const viewer = await getViewer();
  if (!viewer) redirect(await signInPath());
  if (viewer.mustChangePassword) redirect("/password");
  // canAs: a viewer confined to a tenant gets the 403 page for what only a global account may do.
  if (permission && !canAs(viewer, permission)) forbidden();
  return viewer;
}

/** Where a browser without a live session goes: a district portal's ended session gets its own line (no password form). */
async function signInPath(): Promise<string> {
  const session = await unsealSession(await sealedSessionCookie());
  return session?.portal ? "/signin?portal=ended" : "/signin";
}

/** For server actions: the viewer, else an AppError (unauthorized / forbidden) the action can return as a message. */
export async function authorizeAction(permission: Permission): Promise<Principal> {
  const viewer = await getViewer();
  if (!viewer) throw new AppError("unauthorized", "Your session has ended; sign in again.");
  if (viewer.mustChangePassword) throw new AppError("forbidden", "Choose your own password first: open /password.");
  if (!can(viewer.role, permission)) throw new AppError("forbidden", roleRefusal(viewer.role, permission), { permission, role: viewer.role });
  if (!canAs(viewer, permission))
    throw new AppError("forbidden", confinedRefusal(viewer.tenantId, permission), {
      permission,
      tenant: viewer.tenantId,
    });
  return viewer;
}
