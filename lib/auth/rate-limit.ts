// Sign-in rate limit: failed attempts per (email, IP) in a sliding window,
// counted in Postgres (sign_in_attempts) so every dashboard process shares it.
import type { PrismaClient } from "../db/prisma";
import { AppError } from "../errors";

/** 5 failures per 15 minutes per email and IP (OWASP's guidance is a handful, then a lockout or delay). */
export const SIGN_IN_MAX_FAILURES = Number(process.env.HOOKLEDGER_SIGNIN_MAX_FAILURES ?? 5);
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/**
 * A cap per email from any address, so rotating addresses (or a forged
 * X-Forwarded-For) cannot buy unlimited guesses. It lets an attacker lock one
 * account out for the window, the usual trade-off; the message says to wait.
 */
export const SIGN_IN_MAX_FAILURES_PER_EMAIL = Number(process.env.HOOKLEDGER_SIGNIN_MAX_FAILURES_PER_EMAIL ?? 20);

export async function assertSignInAllowed(prisma: PrismaClient, email: string, ip: string): Promise<void> {
  const since = new Date(Date.now() - SIGN_IN_WINDOW_SECONDS * 1000);
  const recent = await prisma.signInAttempt.findMany({
    where: { email, attemptedAt: { gt: since } },
    orderBy: { attemptedAt: "asc" },
    select: { attemptedAt: true, ip: true },
  });
  const fromIp = recent.filter((r) => r.ip === ip);
  const blocking =
    fromIp.length >= SIGN_IN_MAX_FAILURES
      ? fromIp[fromIp.length - SIGN_IN_MAX_FAILURES]
      : recent.length >= SIGN_IN_MAX_FAILURES_PER_EMAIL
        ? recent[recent.length - SIGN_IN_MAX_FAILURES_PER_EMAIL]
        : null;
  if (!blocking) return;
  // Allowed again once the oldest failure that counts leaves the window.
  const oldest = blocking.attemptedAt.getTime();
  const retryAfter = Math.max(1, Math.ceil((oldest + SIGN_IN_WINDOW_SECONDS * 1000 - Date.now()) / 1000));
  throw new AppError(
    "rate_limited",
    `Too many failed sign-ins for ${email} from this address. Try again in ${Math.ceil(retryAfter / 60)} minute(s), or ask an admin to reset the password.`,
    { retryAfterSeconds: retryAfter },
  );
}

export async function recordSignInFailure(prisma: PrismaClient, email: string, ip: string): Promise<void> {
  await prisma.signInAttempt.create({ data: { email, ip } });
  // Old rows are useless; trim them now and then rather than with a job.
  if (Math.random() < 0.05)
    await prisma.signInAttempt.deleteMany({ where: { attemptedAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } });
}

export async function clearSignInFailures(prisma: PrismaClient, email: string, ip: string): Promise<void> {
  await prisma.signInAttempt.deleteMany({ where: { email, ip } });
}
