// Admin use cases for users and API tokens (the admin pages' server actions
// call these). Each checks the permission itself, so enforcement does not
// depend on which page or action calls it, and each writes its audit row in
// the same transaction as the change (invariant 7). Passwords and tokens are
// returned once and never written to the audit log.
import type { PrismaClient } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import { can, ROLES, type Permission, type Role } from "./permissions";
import type { Principal } from "./principal";
import { createUser, listUsers, type CreatedUser, type UserView } from "./users";
import { createApiToken } from "./tokens";

function authorize(principal: Principal, permission: Permission) {
  if (!can(principal.role, permission)) throw new AppError("forbidden", `The ${principal.role} role may not ${permission}.`, { permission, role: principal.role });
}

export async function findUsers(prisma: PrismaClient, principal: Principal): Promise<UserView[]> {
  authorize(principal, "users.manage");
  return listUsers(prisma);
}

export async function createUserAsAdmin(prisma: PrismaClient, input: { email: string; role: string }, principal: Principal): Promise<CreatedUser> {
  authorize(principal, "users.manage");
  return prisma.$transaction(async (tx) => {
    const u = await createUser(tx, input);
    await writeAudit(tx, { actor: principal.actor, action: "user.create", targetType: "user", targetId: u.id, details: { email: u.email, role: u.role } });
    return u;
  });
}

/** Disabling ends the user's sessions at once (every request re-reads the user). */
export async function setUserDisabled(prisma: PrismaClient, id: string, disabled: boolean, principal: Principal): Promise<void> {
  authorize(principal, "users.manage");
  if (disabled && principal.kind === "user" && principal.id === id) throw new AppError("bad_request", "You cannot disable yourself; ask another admin.");
  await prisma.$transaction(async (tx) => {
    const u = await tx.user.findUnique({ where: { id } });
    if (!u) throw notFound("User", id);
    await tx.user.update({ where: { id }, data: { disabledAt: disabled ? new Date() : null } });
    await writeAudit(tx, { actor: principal.actor, action: disabled ? "user.disable" : "user.enable", targetType: "user", targetId: id, details: { email: u.email } });
  });
}

export type TokenView = { id: string; name: string; role: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };

export async function findTokens(prisma: PrismaClient, principal: Principal): Promise<TokenView[]> {
  authorize(principal, "tokens.manage");
  const rows = await prisma.apiToken.findMany({ orderBy: { createdAt: "desc" }, take: 500 });
  return rows.map((t) => ({
    id: t.id,
    name: t.name,
    role: t.role,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  }));
}

export async function createTokenAsAdmin(prisma: PrismaClient, input: { role: string; name?: string }, principal: Principal) {
  authorize(principal, "tokens.manage");
  if (!(ROLES as readonly string[]).includes(input.role)) throw new AppError("validation_failed", `The role must be one of ${ROLES.join(", ")}.`);
  const name = input.name?.trim();
  if (name && !/^[\w.@ -]{1,80}$/.test(name)) throw new AppError("validation_failed", "A token name is 1–80 letters, digits, spaces and . _ @ -.");
  return prisma.$transaction(async (tx) => {
    const t = await createApiToken(tx as unknown as PrismaClient, { role: input.role as Role, name: name || undefined });
    await writeAudit(tx, { actor: principal.actor, action: "token.create", targetType: "api_token", targetId: t.id, details: { name: t.name, role: t.role } });
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
    await writeAudit(tx, { actor: principal.actor, action: "token.revoke", targetType: "api_token", targetId: id, details: { name: t.name, role: t.role } });
  });
}
