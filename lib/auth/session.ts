// The signed-in viewer of a dashboard page or server action. The access-control
// work replaces this body with a real session (iron-session); until then the
// dashboard has no sign-in and every viewer is treated as a read-only support user.
import type { Principal } from "./principal";

export async function getViewer(): Promise<Principal | null> {
  return { kind: "user", id: "anonymous", role: "support", actor: "user:anonymous" };
}
