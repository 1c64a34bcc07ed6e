// The ledger's names, exported once: every other module (the worker, the read
// model, the API's validation, and the dashboard's filters and legends) imports
// them from here instead of spelling them again. Client-safe: no I/O, no
// server imports, so the UI can render its options from these lists.
import { DEAD_LETTER_REASONS, ERROR_CLASSES, type DeadLetterReason, type ErrorClass } from "./classify";

export const DELIVERY_STATES = ["pending", "in_flight", "scheduled", "delivered", "dead_letter", "resolved"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** deliveries.resolution: an operator's decision that a dead letter will not be delivered (CHECK of migration 0013). */
export const RESOLUTIONS = ["discarded", "fixed_at_source", "superseded"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];
/**
 * The resolution an erasure writes (lib/ledger/sql/erase.ts): the event's payload is gone, so the delivery can never be sent.
 * Not among RESOLUTIONS, which are an operator's choices: nobody resolves a delivery as erased by hand.
 */
const ERASED_RESOLUTION = "erased" as const;
/** Every value deliveries.resolution can hold (CHECK of migration 0019), for labels and filters. */
export const DELIVERY_RESOLUTIONS = [...RESOLUTIONS, ERASED_RESOLUTION] as const;
export type DeliveryResolution = (typeof DELIVERY_RESOLUTIONS)[number];
/** The states a resolve accepts and a resend accepts (the 409s name them). */
export const RESOLVABLE_STATES: DeliveryState[] = ["dead_letter"];
export const RESENDABLE_STATES: DeliveryState[] = ["delivered", "resolved"];

export const SUBSCRIPTION_STATES = ["active", "paused", "disabled"] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/**
 * redrive_batches.status (the CHECK of migration 0005, in its order): running while the pacer moves its items, then
 * done or cancelled. For the Redrives list's status filter and the words and styles the dashboard keys by status.
 */
export const BATCH_STATUSES = ["running", "cancelled", "done"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * redrive_batches.status of a finished batch (a redrive's, recover's or backfill's): done, every item handled, or
 * cancelled. The pacer moves none of its items any more, but those it moved may still be queued or being sent. The
 * settle rounds (settleFinishedBatches in lib/ledger/sql/recover.ts) and the partial index redrive_batches_unsettled
 * spell this list in SQL, where it cannot be a parameter (the planner must see the index's own predicate);
 * test/codebase/finished-batch-statuses.test.ts holds both to it.
 */
export const FINISHED_BATCH_STATUSES: readonly string[] = ["done", "cancelled"] satisfies BatchStatus[];
/** Whether a batch of this status is finished: done or cancelled, not running (nor a status this list does not know). */
export function isFinishedBatch(status: string): boolean {
  return FINISHED_BATCH_STATUSES.includes(status);
}

export const ATTEMPT_TRIGGERS = ["scheduled", "redrive", "manual", "resend"] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

/** attempts.outcome (the CHECK constraint of migration 0001). */
export const ATTEMPT_OUTCOMES = ["delivered", "retry", "dead_letter", "abandoned"] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Error classes (attempts.error_class, deliveries.last_error_class), defined beside the classifier that assigns them. */
export { ERROR_CLASSES, type ErrorClass };

/** An error class in words, for people: the dashboard's labels and filters, and the lookup's sentences. */
export const ERROR_CLASS_WORDS: Record<ErrorClass, string> = {
  timeout: "timeout",
  connect_refused: "connection refused",
  connect_timeout: "connect timeout",
  reset: "connection reset",
  dns: "DNS failure",
  tls: "TLS failure",
  network: "other network error",
  http_408: "HTTP 408",
  http_425: "HTTP 425",
  http_429: "HTTP 429 (rate limited)",
  http_5xx: "HTTP 5xx",
  http_4xx: "HTTP 4xx",
  http_410: "HTTP 410 Gone",
  redirect: "redirect (3xx)",
  target_blocked: "target blocked",
  // The two ways an attempt ends without its answer recorded (docs/GLOSSARY.md, Attempts): said as what the district
  // sees, not as the ledger's lease or the worker process, which a district has never heard of.
  lease_expired: "sending interrupted",
  shutdown: "sending interrupted by a shutdown",
};

/**
 * The classes of an attempt whose answer was never recorded because sending stopped mid-way (its worker died or shut
 * down): the endpoint may have answered, so pages do not say them as the endpoint's silence, and the message stored
 * with them is hookledger's own account of its worker, not the endpoint's words.
 */
export const INTERRUPTED_ERROR_CLASSES: readonly string[] = ["lease_expired", "shutdown"] satisfies ErrorClass[];

/** deliveries.dead_letter_reason: the classifier's map, and the same values as a list for filters. */
export { DEAD_LETTER_REASONS, type DeadLetterReason };
export const DEAD_LETTER_REASON_LIST = Object.values(DEAD_LETTER_REASONS) as readonly DeadLetterReason[];
