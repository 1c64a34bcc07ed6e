import type { Role } from "./permissions";
import { getPrisma } from "../db/prisma";
import { findTokenPrincipal } from "./tokens";

export type Principal = {
  kind: "token" | "user" | "system";
  id: string;
  role: Role;
  /** How the principal appears in audit rows: "token:<name>", "user:<email>", "system". */
  actor: string;
};

export const SYSTEM: Principal = { kind: "system", id: "system", role: "admin", actor: "system" };

/** The caller of an API request, from `Authorization: Bearer <token>`; null if none or invalid. */
export async function principalFromRequest(req: Request): Promise<Principal | null> {
  const header = req.headers.get("authorization");
  const m = header?.match(/^Bearer\s+(\S+)$/i);
  if (m) return findTokenPrincipal(getPrisma(), m[1]);
  return null;
}
