// Admin use cases for users and API tokens (the admin pages' server actions
// call these). Each checks the permission itself, so enforcement does not
// depend on which page or action calls it, and each writes its audit row in
// the same transaction as the change (invariant 7). Passwords and tokens are
// returned once and never written to the audit log.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import { can, confinedRefusal, roleRefusal, ROLES, type Permission, type Role } from "./permissions";
import type { Principal } from "./principal";
import { USER_ROLES, bumpSessionVersion, createUser, listUsers, type CreatedUser, type UserView } from "./users";
import { createApiToken } from "./tokens";
import { generatePassword, hashPassword } from "./password";
import { requireTenant } from "../tenants/manage-tenants";

/**
 * The permission, and a global principal: a scoped admin manages nothing of accounts and tokens (it could otherwise
 * mint a global token, or one for another tenant).
 */
function authorize(principal: Principal, permission: Permission) {
  if (!can(principal.role, permission)) throw new AppError("forbidden", roleRefusal(principal.role, permission), { permission, role: principal.role });
  if (principal.tenantId)
    throw new AppError("forbidden", confinedRefusal(principal.tenantId, permission), {
      permission,
      tenant: principal.tenantId,
    });
}

export async function findUsers(prisma: PrismaClient, principal: Principal): Promise<UserView[]> {
  authorize(principal, "users.manage");
  return listUsers(prisma);
}

/** `tenantId` confines the new user to that tenant (it must exist: 400); null or absent = global. */
export async function createUserAsAdmin(
  prisma: PrismaClient,
  input: { email: string; role: string; tenantId?: string | null },
  principal: Principal,
): Promise<CreatedUser> {
  authorize(principal, "users.manage");
  const tenantId = await requireTenant(prisma, input.tenantId, "tenant");
  // Hashed before the transaction: scrypt takes long enough to outlast its timeout on a busy machine.
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return prisma.$transaction(async (tx) => {
    // The admin knows this password: the user must replace it at first sign-in.
    const u = await createUser(tx, { email: input.email, role: input.role, tenantId, password, passwordHash, mustChangePassword: true });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "user.create",
      targetType: "user",
      targetId: u.id,
      details: { email: u.email, role: u.role, tenant: tenantId },
      tenantId,
    });
    return u;
  });
}

/**
 * Disabling ends the user's sessions at once (every request re-reads the user),
 * and moves the session version, so enabling the user again does not revive
 * the sessions issued before.
 */
export async function setUserDisabled(prisma: PrismaClient, id: string, disabled: boolean, principal: Principal): Promise<void> {
  authorize(principal, "users.manage");
  if (disabled && principal.kind === "user" && principal.id === id) throw new AppError("bad_request", "You cannot disable yourself; ask another admin.");
  await prisma.$transaction(async (tx) => {
    const u = await tx.user.findUnique({ where: { id } });
    if (!u) throw notFound("User", id);
    await tx.user.update({ where: { id }, data: { disabledAt: disabled ? new Date() : null } });
    if (disabled) await bumpSessionVersion(tx, id);
    await writeAudit(tx, {
      actor: principal.actor,
      action: disabled ? "user.disable" : "user.enable",
      targetType: "user",
      targetId: id,
      details: { email: u.email },
      tenantId: u.tenantId,
    });
  });
}

/** A new role ends the user's sessions, so no page keeps showing what the old role could do. */
export async function setUserRole(prisma: PrismaClient, id: string, role: string, principal: Principal): Promise<void> {
  authorize(principal, "users.manage");
  if (!(USER_ROLES as readonly string[]).includes(role)) throw new AppError("validation_failed", `The role must be one of ${USER_ROLES.join(", ")} (got ${role}).`);
  if (principal.kind === "user" && principal.id === id) throw new AppError("bad_request", "You cannot change your own role; ask another admin.");
  await prisma.$transaction(async (tx) => {
    const u = await tx.user.findUnique({ where: { id } });
    if (!u) throw notFound("User", id);
    if (u.role === role) return;
    await tx.user.update({ where: { id }, data: { role } });
    await bumpSessionVersion(tx, id);
    await writeAudit(tx, {
      actor: principal.actor,
      action: "user.role",
      targetType: "user",
      targetId: id,
      details: { email: u.email, from: u.role, to: role },
      tenantId: u.tenantId,
    });
  });
}

export type TokenView = {
  id: string;
  name: string;
  role: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** null = global */
  tenantId: string | null;
};

/** How many tokens the API tokens page lists at once (the newest); the rest are found by `q`. */
const TOKEN_PAGE_SIZE = 500;

/**
 * The newest TOKEN_PAGE_SIZE tokens whose name, id or tenant contains `q` (any case), and how many match in all: the
 * page says when it shows fewer than that, so an older token is searched for rather than silently missing.
 */
export async function findTokens(prisma: PrismaClient, principal: Principal, opts: { q?: string } = {}): Promise<{ items: TokenView[]; total: number }> {
  authorize(principal, "tokens.manage");
  const q = opts.q?.trim().slice(0, 200) ?? "";
  const where = q
    ? {
        OR: [
          { name: { contains: q, mode: "insensitive" as const } },
          { id: { contains: q, mode: "insensitive" as const } },
          { tenantId: { contains: q, mode: "insensitive" as const } },
        ],
      }
    : {};
  const [rows, total] = await Promise.all([
    prisma.apiToken.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: TOKEN_PAGE_SIZE }),
    prisma.apiToken.count({ where }),
  ]);
  const items = rows.map((t) => ({
    id: t.id,
    name: t.name,
    role: t.role,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
    tenantId: t.tenantId ?? null,
  }));
  return { items, total };
}

/** `tenantId` confines the token to that tenant (it must exist: 400); null or absent = global. */
export async function createTokenAsAdmin(prisma: PrismaClient, input: { role: string; name?: string; tenantId?: string | null }, principal: Principal) {
  authorize(principal, "tokens.manage");
  const tenantId = await requireTenant(prisma, input.tenantId, "tenant");
  if (!(ROLES as readonly string[]).includes(input.role)) throw new AppError("validation_failed", `The role must be one of ${ROLES.join(", ")}.`);
  // Minting portal links is a global permission: a portal token confined to a tenant could do nothing at all.
  if (input.role === "portal" && tenantId)
    throw new AppError("validation_failed", "A portal token is global (it mints links for any district); leave the tenant out.", [
      { path: "tenant", message: "must be empty for the portal role" },
    ]);
  const name = input.name?.trim();
  if (name && !/^[\w.@ -]{1,80}$/.test(name)) throw new AppError("validation_failed", "A token name is 1–80 letters, digits, spaces and . _ @ -.");
  return prisma.$transaction(async (tx) => {
    const t = await createApiToken(tx as unknown as PrismaClient, { role: input.role as Role, name: name || undefined, tenantId });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "token.create",
      targetType: "api_token",
      targetId: t.id,
      details: { name: t.name, role: t.role, tenant: tenantId },
      tenantId,
    });
    return t;
  });
}

export async function revokeToken(prisma: PrismaClient, id: string, principal: Principal): Promise<void> {
  authorize(principal, "tokens.manage");
  await prisma.$transaction(async (tx) => {
    const t = await tx.apiToken.findUnique({ where: { id } });
    if (!t) throw notFound("Token", id);
    if (t.revokedAt) return;
    await tx.apiToken.update({ where: { id }, data: { revokedAt: new Date() } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "token.revoke",
      targetType: "api_token",
      targetId: id,
      details: { name: t.name, role: t.role, tenant: t.tenantId ?? null },
      tenantId: t.tenantId,
    });
  });
}
