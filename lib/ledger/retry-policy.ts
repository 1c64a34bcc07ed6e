// A subscription's retry_policy, read one way by everything that needs it: the
// worker (what to do after a failed attempt), the dashboard ("attempt 3 of 7")
// and the API. The API validates a policy on the way in
// (lib/subscriptions/subscription-input.ts); here anything malformed in a stored policy
// falls back to the default field by field rather than stopping deliveries.
import { memoized } from "../memo";
import type { ClassifyOverrides } from "./classify";

/** Ladder of waits between attempts: 30 s, 2 m, 10 m, 1 h, 6 h, 24 h (docs/DESIGN.md invariant 6). */
export const DEFAULT_LADDER_SECONDS = [30, 120, 600, 3600, 6 * 3600, 24 * 3600] as const;
/**
 * A run (from run_started_at) older than this dead-letters as exhausted. The
 * default ladder with jitter spans about 37 h; 3 days leaves room for Retry-After.
 */
export const DEFAULT_MAX_AGE_SECONDS = 3 * 86400;
/** How long one request may take before it counts as a timeout. */
export const DEFAULT_TIMEOUT_MS = 15_000;

export type RetryPolicy = {
  ladderSeconds: readonly number[];
  maxAgeSeconds: number;
  /** Attempts a run may make: one first try plus one per rung, unless the stored policy says otherwise. */
  maxAttempts: number;
  timeoutMs: number;
  classify: ClassifyOverrides;
};

const posInt = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined);

/** The effective policy of a stored retry_policy (an object, or its JSON text). */
export function parseRetryPolicy(stored: unknown): RetryPolicy {
  let value = stored;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      value = {};
    }
  }
  const p = (value && typeof value === "object" && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  const ladder =
    Array.isArray(p.ladderSeconds) && p.ladderSeconds.length > 0 && p.ladderSeconds.every((n) => typeof n === "number" && Number.isFinite(n) && n >= 0)
      ? (p.ladderSeconds as number[])
      : DEFAULT_LADDER_SECONDS;
  const classify: ClassifyOverrides = {};
  if (p.classify && typeof p.classify === "object")
    for (const [k, v] of Object.entries(p.classify as Record<string, unknown>)) if (v === "retry" || v === "dead_letter") classify[k] = v;
  return {
    ladderSeconds: ladder,
    maxAgeSeconds: posInt(p.maxAgeSeconds) ?? DEFAULT_MAX_AGE_SECONDS,
    maxAttempts: posInt(p.maxAttempts) ?? ladder.length + 1,
    timeoutMs: posInt(p.timeoutMs) ?? DEFAULT_TIMEOUT_MS,
    classify,
  };
}

const cache = new Map<string, RetryPolicy>();

/** parseRetryPolicy of the stored JSON text, cached by that text (the claim returns it as text, so a hit costs no parse). */
export function readRetryPolicy(text: string): RetryPolicy {
  return memoized(cache, text, () => parseRetryPolicy(text));
}
