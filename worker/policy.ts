// A subscription's retry_policy as the worker reads it. The API validates it on
// the way in (lib/subscriptions/schema.ts); here anything malformed falls back
// to the defaults field by field rather than stopping deliveries.
import type { BackoffPolicy } from "../lib/ledger/backoff";
import type { ClassifyOverrides } from "../lib/ledger/classify";
import { DEFAULT_TIMEOUT_MS } from "./sender";
import { memoized } from "./memo";

export type WorkerPolicy = BackoffPolicy & { timeoutMs: number; classify: ClassifyOverrides };

const cache = new Map<string, WorkerPolicy>();

/** `text`: the stored retry_policy as JSON text (the claim returns it as text, so a cache hit costs no parse). */
export function readPolicy(text: string): WorkerPolicy {
  return memoized(cache, text, () => parsePolicy(text));
}

function parsePolicy(text: string): WorkerPolicy {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = {};
  }
  const p = (parsed && typeof parsed === "object" ? parsed : {}) as Record<string, unknown>;
  const posInt = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined);
  const ladder =
    Array.isArray(p.ladderSeconds) && p.ladderSeconds.length > 0 && p.ladderSeconds.every((n) => typeof n === "number" && n >= 0)
      ? (p.ladderSeconds as number[])
      : undefined;
  const classify: ClassifyOverrides = {};
  if (p.classify && typeof p.classify === "object")
    for (const [k, v] of Object.entries(p.classify as Record<string, unknown>)) if (v === "retry" || v === "dead_letter") classify[k] = v;
  return {
    ladderSeconds: ladder,
    maxAgeSeconds: posInt(p.maxAgeSeconds),
    maxAttempts: posInt(p.maxAttempts),
    timeoutMs: posInt(p.timeoutMs) ?? DEFAULT_TIMEOUT_MS,
    classify,
  };
}
