// When the next attempt happens (docs/DESIGN.md invariant 6). Pure: the clock and
// the randomness are arguments.

import { DEFAULT_LADDER_SECONDS, DEFAULT_MAX_AGE_SECONDS } from "./retry-policy";

export { DEFAULT_LADDER_SECONDS };
/** A receiver's Retry-After is honoured up to 7 days (docs/DESIGN.md invariant 6). */
export const MAX_RETRY_AFTER_SECONDS = 7 * 86400;
/** ±20 %: spreads a failing district's retries so they do not arrive as one wave. */
const JITTER = 0.2;

/** The parts of a RetryPolicy (./retry-policy.ts) that decide the next attempt; missing ones take the defaults. */
export type BackoffPolicy = { ladderSeconds?: readonly number[]; maxAgeSeconds?: number; maxAttempts?: number };

/** Attempts a run may make: one first try plus one per rung (or retry_policy.maxAttempts). */
export function maxAttempts(policy: BackoffPolicy = {}): number {
  const ladder = policy.ladderSeconds ?? DEFAULT_LADDER_SECONDS;
  return policy.maxAttempts ?? ladder.length + 1;
}

/**
 * Retry-After as seconds from `now`: delta-seconds or an HTTP-date, capped at
 * 7 days; null when absent or unparseable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (v === "") return null;
  let seconds: number;
  if (/^\d+$/.test(v)) seconds = Number(v);
  else {
    // An HTTP-date has a weekday and month name; Date.parse alone would read "-5" as a year.
    if (!/[a-z]{3}/i.test(v)) return null;
    const t = Date.parse(v);
    if (Number.isNaN(t)) return null;
    seconds = Math.max(0, Math.ceil((t - now.getTime()) / 1000));
  }
  return Math.min(seconds, MAX_RETRY_AFTER_SECONDS);
}

export type NextAttempt = { kind: "retry"; at: Date; delaySeconds: number } | { kind: "exhausted" };

/**
 * The next attempt after a failed one. `attemptNumber` is the attempt that just
 * failed, counted within the current run (1 = the first try).
 */
export function nextAttempt(opts: {
  attemptNumber: number;
  runStartedAt: Date;
  now: Date;
  retryAfterSeconds?: number | null;
  policy?: BackoffPolicy;
  random?: () => number;
}): NextAttempt {
  const policy = opts.policy ?? {};
  const ladder = policy.ladderSeconds ?? DEFAULT_LADDER_SECONDS;
  if (opts.attemptNumber >= maxAttempts(policy)) return { kind: "exhausted" };
  let delaySeconds: number;
  if (opts.retryAfterSeconds !== null && opts.retryAfterSeconds !== undefined) {
    delaySeconds = Math.min(opts.retryAfterSeconds, MAX_RETRY_AFTER_SECONDS);
  } else {
    const rung = ladder[Math.min(opts.attemptNumber - 1, ladder.length - 1)];
    const r = (opts.random ?? Math.random)();
    delaySeconds = rung * (1 - JITTER + 2 * JITTER * r);
  }
  const at = new Date(opts.now.getTime() + Math.round(delaySeconds * 1000));
  const maxAge = policy.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  if (at.getTime() - opts.runStartedAt.getTime() > maxAge * 1000) return { kind: "exhausted" };
  return { kind: "retry", at, delaySeconds };
}
