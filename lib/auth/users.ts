// Dashboard users: created by `hookledger user create` (or the demo), signed in
// with email and password. Producers are API tokens only, never users.
import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { PrismaClient, Tx } from "../db/prisma";
import { AppError } from "../errors";
import { writeAudit } from "../audit";
import type { Role } from "./permissions";
import { PasswordHashingBusy, dummyHash, generatePassword, hashPassword, needsRehash, verifyPassword } from "./password";

export const USER_ROLES = ["support", "manager", "engineer", "admin"] as const satisfies readonly Role[];
type UserRole = (typeof USER_ROLES)[number];

const ZEmail = z.string().trim().toLowerCase().max(254).email("an email address such as you@example.com");
const MIN_PASSWORD_LENGTH = 12;
/** What a fresh install tells the operator (sign-in page, `hookledger start`). */
export const FIRST_ADMIN_COMMAND = "npx hookledger user create --email you@example.com --role admin";

/** The demo's admin (`hookledger start --demo`); `hookledger start` without --demo warns while it exists. */
export const DEMO_ADMIN_EMAIL = "demo@hookledger.local";

export type CreatedUser = { id: string; email: string; role: UserRole; password: string; tenantId: string | null };

/**
 * Creates a user. Without `password` a random one is generated; either way it is
 * returned once, and only its scrypt hash is stored.
 */
export async function createUser(
  prisma: PrismaClient | Tx,
  opts: {
    email: string;
    role: Role | string;
    password?: string;
    mustChangePassword?: boolean;
    /** hashPassword(password), made before a transaction opens (scrypt takes a while) */ passwordHash?: string;
    /** Confines the user to this tenant (null or absent = global); the caller has checked it exists (requireTenant). */
    tenantId?: string | null;
  },
): Promise<CreatedUser> {
  const email = ZEmail.safeParse(opts.email);
  if (!email.success) throw new AppError("validation_failed", `--email: ${email.error.issues[0].message} (got "${opts.email}").`);
  if (!(USER_ROLES as readonly string[]).includes(opts.role))
    throw new AppError(
      "validation_failed",
      opts.role === "producer"
        ? "producer is for API tokens that publish events; create one with `hookledger token create --role producer`."
        : `The role must be one of ${USER_ROLES.join(", ")} (got ${opts.role}).`,
    );
  const password = opts.password ?? generatePassword();
  if (password.length < MIN_PASSWORD_LENGTH) throw new AppError("validation_failed", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  const exists = await prisma.user.findUnique({ where: { email: email.data }, select: { id: true } });
  if (exists) throw new AppError("conflict", `A user with email ${email.data} already exists.`);
  const id = `usr_${randomBytes(8).toString("hex")}`;
  await prisma.user.create({
    data: {
      id,
      email: email.data,
      role: opts.role,
      passwordHash: opts.passwordHash ?? (await hashPassword(password)),
      mustChangePassword: opts.mustChangePassword ?? false,
      tenantId: opts.tenantId ?? null,
    },
  });
  return { id, email: email.data, role: opts.role as UserRole, password, tenantId: opts.tenantId ?? null };
}

export async function countUsers(prisma: PrismaClient): Promise<number> {
  return prisma.user.count({ where: { disabledAt: null } });
}

/** The active user with this id, or null (deleted or disabled users lose their sessions at once). */
export async function findActiveUser(prisma: PrismaClient, id: string) {
  const u = await prisma.user.findUnique({ where: { id } });
  return u && !u.disabledAt ? u : null;
}

export type UserView = {
  id: string;
  email: string;
  role: string;
  createdAt: string;
  lastSignInAt: string | null;
  disabled: boolean;
  /** null = global */
  tenantId: string | null;
};

export async function listUsers(prisma: PrismaClient): Promise<UserView[]> {
  const rows = await prisma.user.findMany({ orderBy: { email: "asc" } });
  return rows.map((u) => ({
    id: u.id,
    email: u.email,
    role: u.role,
    createdAt: u.createdAt.toISOString(),
    lastSignInAt: u.lastSignInAt?.toISOString() ?? null,
    disabled: Boolean(u.disabledAt),
    tenantId: u.tenantId ?? null,
  }));
}

/** Checks email and password; the same work and the same answer for an unknown email as for a wrong password. */
export async function verifyCredentials(prisma: PrismaClient, emailInput: string, password: string) {
  const email = emailInput.trim().toLowerCase();
  const user = await prisma.user.findUnique({ where: { email } });
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !ok || user.disabledAt) return null;
  // A hash from before today's scrypt parameters is replaced now, while the password is at hand.
  // Not worth refusing a right password for: with the hash queue full it waits for the next sign-in.
  const passwordHash = needsRehash(user.passwordHash)
    ? await hashPassword(password).catch((err: unknown) => {
        if (err instanceof PasswordHashingBusy) return undefined;
        throw err;
      })
    : undefined;
  return prisma.user.update({ where: { id: user.id }, data: { lastSignInAt: new Date(), ...(passwordHash ? { passwordHash } : {}) } });
}

/** Ends every session of the user issued so far (each request compares the cookie's version with this one). */
export async function bumpSessionVersion(prisma: PrismaClient | Tx, id: string): Promise<number> {
  const u = await prisma.user.update({ where: { id }, data: { sessionVersion: { increment: 1 } }, select: { sessionVersion: true } });
  return u.sessionVersion;
}

/**
 * The user's own password change: the current password must be right, the new
 * one long enough and different. Every other session of the user ends (the
 * version moves); the caller issues this browser a new cookie under the new
 * version. Returns the user as updated, or null for a wrong current password.
 */
export async function changePassword(prisma: PrismaClient, id: string, current: string, next: string) {
  if (next.length < MIN_PASSWORD_LENGTH) throw new AppError("validation_failed", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (next.length > 1024) throw new AppError("validation_failed", "A password has at most 1024 characters.");
  const user = await prisma.user.findUnique({ where: { id } });
  if (!user || user.disabledAt) throw new AppError("unauthorized", "Your session has ended; sign in again.");
  if (!(await verifyPassword(current, user.passwordHash))) return null;
  if (next === current) throw new AppError("validation_failed", "Choose a password different from the current one.");
  const passwordHash = await hashPassword(next);
  return prisma.$transaction(async (tx) => {
    const u = await tx.user.update({
      where: { id },
      data: { passwordHash, mustChangePassword: false, passwordChangedAt: new Date(), sessionVersion: { increment: 1 } },
    });
    // A district user's own change is the district's record (its audit page lists it), not a global one.
    await writeAudit(tx, {
      actor: `user:${u.email}`,
      action: "user.password_change",
      targetType: "user",
      targetId: id,
      details: { email: u.email },
      tenantId: u.tenantId,
    });
    return u;
  });
}
