// What happens to an attempt's result: delivered, retried at T, or
// dead-lettered with a reason, and whether the subscription is disabled. One
// pure function from the claimed row's run state, the sender's result, the
// subscription's retry policy, the clock and a random source; the worker
// applies what it returns (lib/ledger/sql/write-results.ts writes it).
//
// "What happens to a 429?" It is retryable (./classify.ts); the next attempt
// is after the receiver's Retry-After when it sent one (capped at 7 days),
// else after the ladder's next rung with ±20 % jitter (./backoff.ts); past the
// policy's last attempt, or past its maxAgeSeconds from the run's start, it is
// dead-lettered as `exhausted` (docs/DESIGN.md invariants 5 and 6).
import { nextAttempt, parseRetryAfter } from "./backoff";
import { classifyAttempt, DEAD_LETTER_REASONS, type DeadLetterReason, type ErrorClass, type SendResult } from "./classify";
import type { RetryPolicy } from "./retry-policy";

export type OutcomeInput = {
  /** Attempts already made in the current run (the claimed row's attempt_count). */
  attemptCount: number;
  /** When the current run started (epoch ms or a Date): a run older than policy.maxAgeSeconds is exhausted. */
  runStartedAt: number | Date;
  result: SendResult;
  policy: RetryPolicy;
  /** When the answer came in. */
  now: Date;
  /** Jitter source in [0, 1) (tests pass a constant). */
  random?: () => number;
};

export type Outcome = {
  state: "delivered" | "scheduled" | "dead_letter";
  /** For `scheduled`: when the next attempt is due. */
  nextAttemptAt: Date | null;
  deadLetterReason: DeadLetterReason | null;
  errorClass: ErrorClass | null;
  /** The transport's message, or `HTTP <status>` for a non-2xx answer. */
  errorMessage: string | null;
  /** The receiver's Retry-After in seconds (capped), when it sent one; null when absent or unparseable. */
  retryAfterSeconds: number | null;
  /** 410 Gone: the subscription is disabled in the same transaction as the result. */
  disablesSubscription: boolean;
  /** This attempt's number within the run (1 = the first try). */
  attemptInRun: number;
};

export function attemptOutcome(input: OutcomeInput): Outcome {
  const { result, policy, now } = input;
  const attemptInRun = input.attemptCount + 1;
  const verdict = classifyAttempt(result, policy.classify);
  const retryAfter = parseRetryAfter(result.retryAfter, now);
  let state: Outcome["state"];
  let nextAttemptAt: Date | null = null;
  let reason: DeadLetterReason | null = null;
  if (verdict.verdict === "delivered") state = "delivered";
  else if (verdict.verdict === "dead_letter") {
    state = "dead_letter";
    reason = verdict.reason;
  } else {
    const next = nextAttempt({
      attemptNumber: attemptInRun,
      runStartedAt: input.runStartedAt instanceof Date ? input.runStartedAt : new Date(input.runStartedAt),
      now,
      retryAfterSeconds: retryAfter,
      policy,
      random: input.random,
    });
    if (next.kind === "exhausted") {
      state = "dead_letter";
      reason = DEAD_LETTER_REASONS.exhausted;
    } else {
      state = "scheduled";
      nextAttemptAt = next.at;
    }
  }
  const status = result.statusCode;
  return {
    state,
    nextAttemptAt,
    deadLetterReason: reason,
    errorClass: verdict.errorClass,
    errorMessage: result.errorMessage ?? (status !== null && (status < 200 || status >= 300) ? `HTTP ${status}` : null),
    retryAfterSeconds: result.retryAfter !== null ? retryAfter : null,
    disablesSubscription: reason === DEAD_LETTER_REASONS.gone,
    attemptInRun,
  };
}
