// Classifying an attempt's result before any retry (docs/DESIGN.md invariant 5):
// one pure function from the sender's result and the subscription's classify
// overrides to "delivered", "retry" or "dead_letter" with a reason. No I/O.
// lib/ledger/outcome.ts turns the verdict into the delivery's next state.

/** Error classes stored on attempts.error_class and deliveries.last_error_class. */
export const ERROR_CLASSES = [
  "timeout", // no complete answer within the subscription's timeout
  "connect_refused", // TCP refused or unreachable: nothing was sent
  "connect_timeout", // TCP/TLS handshake did not finish: nothing was sent
  "reset", // the connection dropped (after the request may have been written)
  "dns", // the host name did not resolve
  "tls", // certificate or handshake failure
  "network", // any other transport failure
  "http_408",
  "http_425",
  "http_429",
  "http_5xx",
  "http_4xx",
  "http_410",
  "redirect", // a 3xx: redirects are not followed
  "target_blocked", // the target resolved to a private, loopback or otherwise refused address (SSRF guard)
  "lease_expired", // a worker died or stalled holding the lease; recorded by the reaper
  "shutdown", // the worker stopped while the request was on the wire
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** deliveries.dead_letter_reason values. */
export const DEAD_LETTER_REASONS = {
  /** Past the last rung of the ladder, or older than retry_policy.maxAgeSeconds. */
  exhausted: "exhausted",
  /** A non-retryable answer (4xx other than 408/425/429, a redirect, an override). */
  permanent: "permanent",
  /** 410 Gone: the subscription is disabled too. */
  gone: "gone",
  /** The SSRF guard refused the target. */
  target_blocked: "target_blocked",
  /** Its lease was reaped (a worker died or stalled mid-send) on every attempt of its budget. */
  abandoned: "abandoned",
} as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[keyof typeof DEAD_LETTER_REASONS];

/** What the sender reports (docs/STYLE.md #6): it never throws for a receiver's failure. */
export type SendResult = {
  outcome: "response" | "error";
  statusCode: number | null;
  errorClass: ErrorClass | null;
  errorMessage: string | null;
  /** Raw Retry-After header, if any (parsed by lib/ledger/backoff.ts). */
  retryAfter: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  responseHeaders: Record<string, string> | null;
  /** The request may have reached the receiver although no answer came back. */
  ambiguous: boolean;
};

export type ClassifyOverrides = Record<string, "retry" | "dead_letter">;

export type Verdict =
  | { verdict: "delivered"; errorClass: null }
  | { verdict: "retry"; errorClass: ErrorClass }
  | { verdict: "dead_letter"; errorClass: ErrorClass; reason: DeadLetterReason };

/** The error class of an HTTP status that is not 2xx. */
function statusClass(status: number): ErrorClass {
  if (status === 408) return "http_408";
  if (status === 425) return "http_425";
  if (status === 429) return "http_429";
  if (status === 410) return "http_410";
  if (status >= 300 && status < 400) return "redirect";
  if (status >= 500) return "http_5xx";
  return "http_4xx";
}

/** The default for a non-2xx status: transient statuses retry, everything else is permanent. */
function defaultRetryable(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500 || status < 200;
}

/**
 * Classifies one attempt. `overrides` is retry_policy.classify: an exact status
 * ("409") wins over a class ("4xx"); 2xx is always delivered.
 */
export function classifyAttempt(result: SendResult, overrides: ClassifyOverrides = {}): Verdict {
  if (result.outcome === "response" && result.statusCode !== null) {
    const status = result.statusCode;
    if (status >= 200 && status < 300) return { verdict: "delivered", errorClass: null };
    const errorClass = statusClass(status);
    const override = overrides[String(status)] ?? overrides[`${Math.floor(status / 100)}xx`];
    const retry = override ? override === "retry" : defaultRetryable(status);
    if (retry) return { verdict: "retry", errorClass };
    const reason = status === 410 ? DEAD_LETTER_REASONS.gone : DEAD_LETTER_REASONS.permanent;
    return { verdict: "dead_letter", errorClass, reason };
  }
  const errorClass = result.errorClass ?? "network";
  if (errorClass === "target_blocked") return { verdict: "dead_letter", errorClass, reason: DEAD_LETTER_REASONS.target_blocked };
  // Every transport failure is transient: timeouts, resets, refused, DNS, TLS.
  return { verdict: "retry", errorClass };
}
