// Sign-in rate limit: failed attempts in a sliding window, counted in Postgres
// (sign_in_attempts) so every dashboard process shares it. Each attempt is
// recorded BEFORE the password is checked and the count is read after that
// insert, so a burst of parallel guesses cannot all pass the check before any
// of them is counted: the k-th concurrent attempt sees at least k rows.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { AppError } from "../errors";
import { envInt } from "../env";

/** 5 failures per 15 minutes per email and IP (OWASP's guidance is a handful, then a lockout or delay). */
export const SIGN_IN_MAX_FAILURES = envInt("HOOKLEDGER_SIGNIN_MAX_FAILURES", { default: 5, min: 1, max: 1000 });
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/**
 * A cap per email from any address, so rotating addresses cannot buy
 * unlimited guesses. It lets an attacker lock one
 * account out for the window, the usual trade-off; the message says to wait.
 */
export const SIGN_IN_MAX_FAILURES_PER_EMAIL = envInt("HOOKLEDGER_SIGNIN_MAX_FAILURES_PER_EMAIL", { default: 20, min: 1, max: 10_000 });
/**
 * A cap per address over every email, checked before any password hashing, so
 * one client cannot keep the scrypt thread pool busy with a flood of fresh
 * emails (each of which would otherwise start at zero failures).
 */
export const SIGN_IN_MAX_FAILURES_PER_ADDRESS = envInt("HOOKLEDGER_SIGNIN_MAX_FAILURES_PER_ADDRESS", { default: 30, min: 1, max: 100_000 });

export type SignInAttempt = { id: bigint };

/**
 * Stored for an attempt whose address is not known (lib/auth/proxies.ts
 * clientAddress: not served by server.ts). Never counted as an address: all
 * such clients would share it, and 30 failures from anyone would lock
 * everyone out; those attempts are held by the per-email cap alone.
 */
export const UNKNOWN_ADDRESS = "unknown";

/**
 * Records an attempt (as a failure until `signInSucceeded` clears it), then
 * counts: over any limit, the attempt is withdrawn and a 429 thrown, so a
 * refused attempt costs the caller nothing and the limiter no scrypt.
 * `ip` is the client's address, or null when it cannot be known.
 */
export async function beginSignInAttempt(prisma: PrismaClient, email: string, ip: string | null): Promise<SignInAttempt> {
  const row = await prisma.signInAttempt.create({ data: { email, ip: ip ?? UNKNOWN_ADDRESS }, select: { id: true, attemptedAt: true } });
  const since = new Date(Date.now() - SIGN_IN_WINDOW_SECONDS * 1000);
  const [byEmail, byAddress] = await Promise.all([
    prisma.signInAttempt.findMany({ where: { email, attemptedAt: { gt: since } }, orderBy: { id: "asc" }, select: { id: true, attemptedAt: true, ip: true } }),
    ip === null ? 0 : prisma.signInAttempt.count({ where: { ip, attemptedAt: { gt: since } } }),
  ]);
  const fromIp = ip === null ? [] : byEmail.filter((r) => r.ip === ip);
  let blocking: { attemptedAt: Date } | null = null;
  let what = `for ${email} from this address`;
  if (fromIp.length > SIGN_IN_MAX_FAILURES) blocking = fromIp[fromIp.length - 1 - SIGN_IN_MAX_FAILURES];
  else if (byEmail.length > SIGN_IN_MAX_FAILURES_PER_EMAIL) {
    blocking = byEmail[byEmail.length - 1 - SIGN_IN_MAX_FAILURES_PER_EMAIL];
    what = `for ${email}`;
  } else if (ip !== null && byAddress > SIGN_IN_MAX_FAILURES_PER_ADDRESS) {
    what = "from this address";
    const oldest = await prisma.signInAttempt.findMany({
      where: { ip, attemptedAt: { gt: since } },
      orderBy: { id: "desc" },
      skip: SIGN_IN_MAX_FAILURES_PER_ADDRESS,
      take: 1,
      select: { attemptedAt: true },
    });
    blocking = oldest[0] ?? row;
  }
  if (!blocking) {
    trimOld(prisma);
    return { id: row.id };
  }
  await prisma.signInAttempt.delete({ where: { id: row.id } }).catch(() => {});
  // Allowed again once the oldest failure that counts leaves the window.
  const retryAfter = Math.max(1, Math.ceil((blocking.attemptedAt.getTime() + SIGN_IN_WINDOW_SECONDS * 1000 - Date.now()) / 1000));
  throw new AppError("rate_limited", `Too many failed sign-ins ${what}. Try again in ${Math.ceil(retryAfter / 60)} minute(s), or ask an admin to reset the password.`, {
    retryAfterSeconds: retryAfter,
  });
}

/** The password was right: this attempt and the earlier failures of this email and address no longer count. */
export async function signInSucceeded(prisma: PrismaClient, email: string, ip: string | null): Promise<void> {
  await prisma.signInAttempt.deleteMany({ where: { email, ip: ip ?? UNKNOWN_ADDRESS } });
}

/** The password was never checked (the hash queue was full): the attempt is not a failure. */
export async function withdrawSignInAttempt(prisma: PrismaClient, attempt: SignInAttempt): Promise<void> {
  await prisma.signInAttempt.delete({ where: { id: attempt.id } }).catch(() => {});
}

function trimOld(prisma: PrismaClient) {
  // Old rows are useless; trim them now and then rather than with a job.
  if (Math.random() < 0.05) void prisma.signInAttempt.deleteMany({ where: { attemptedAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } }).catch(() => {});
}
