// Human labels for the ledger's and the audit log's names, in one place. Each
// map is keyed by the type of its source list (lib/ledger/states.ts,
// lib/audit.ts), so a name added there without a label here is a type error;
// filters build their options from the source list through optionsOf, so a
// name can neither be missing from a filter nor be offered when nothing has it.
// Only types come from lib/audit.ts: its zod schemas stay out of the browser.
import {
  DEAD_LETTER_REASON_LIST,
  DELIVERY_STATES,
  ERROR_CLASSES,
  RESOLUTIONS,
  type AttemptOutcome,
  type AttemptTrigger,
  type DeadLetterReason,
  type DeliveryResolution,
  type DeliveryState,
  type ErrorClass,
  type SubscriptionState,
  ERROR_CLASS_WORDS,
  INTERRUPTED_ERROR_CLASSES,
} from "@/lib/ledger/states";
import type { AuditAction, AuditTargetType } from "@/lib/audit";
import { errorInWords } from "@/lib/dashboard/error-words";

// The words of docs/GLOSSARY.md: a page, a badge and a filter say the same thing for the same state.
export const DELIVERY_STATE_LABELS: Record<DeliveryState, string> = {
  pending: "pending",
  in_flight: "in flight",
  scheduled: "scheduled",
  delivered: "delivered",
  dead_letter: "dead-lettered",
  resolved: "resolved",
};

export const SUBSCRIPTION_STATE_LABELS: Record<SubscriptionState, string> = {
  active: "active",
  paused: "paused",
  disabled: "disabled",
};

export const ATTEMPT_OUTCOME_LABELS: Record<AttemptOutcome, string> = {
  delivered: "delivered",
  retry: "will retry",
  dead_letter: "dead-lettered",
  abandoned: "abandoned",
};

/** An attempt's outcome as the delivery timeline says it. */
export const ATTEMPT_OUTCOME_SENTENCES: Record<AttemptOutcome, string> = {
  delivered: "Delivered",
  retry: "Failed, will retry",
  dead_letter: "Failed, dead-lettered",
  abandoned: "Abandoned: sending was interrupted before an answer was recorded; the endpoint may have received it",
};

export const ATTEMPT_TRIGGER_LABELS: Record<AttemptTrigger, string> = {
  scheduled: "scheduled",
  redrive: "redrive",
  manual: "retry now",
  resend: "resend",
};

/**
 * Why an attempt was made, in a district's words (a delivery's timeline). The schedule also makes a delivery's first
 * attempt: the timeline calls that one "First send".
 */
export const ATTEMPT_TRIGGER_WORDS: Record<AttemptTrigger, string> = {
  scheduled: "Scheduled retry",
  redrive: "Sent again",
  manual: "Sent now, ahead of its scheduled retry",
  resend: "Sent again after it had been delivered or resolved",
};

// In lib, for the plain-words descriptions there (lib/dashboard/describe.ts) to say the same.
export const ERROR_CLASS_LABELS: Record<ErrorClass, string> = ERROR_CLASS_WORDS;

export const DEAD_LETTER_REASON_LABELS: Record<DeadLetterReason, string> = {
  exhausted: "retries exhausted",
  permanent: "permanent error (rejected)",
  gone: "410 Gone",
  target_blocked: "target blocked",
  abandoned: "abandoned (worker died mid-send)",
};

/** The reasons in a district's words (its Dead letters page, the batches sent again for it): no worker, no classifier. */
export const DEAD_LETTER_REASON_WORDS: Record<DeadLetterReason, string> = {
  exhausted: "gave up after every retry",
  permanent: "refused by the endpoint",
  gone: "the endpoint answered that it is gone (HTTP 410)",
  target_blocked: "the address is not allowed",
  abandoned: "sending was interrupted every time",
};

export const AUDIT_ACTION_LABELS: Record<AuditAction, string> = {
  "delivery.redrive": "redriven",
  "delivery.retry_now": "retried now",
  "redrive.create": "bulk redrive started",
  "redrive.cancel": "bulk redrive cancelled",
  "recover.create": "recover started",
  "backfill.create": "backfill started",
  "delivery.resolve": "resolved",
  "delivery.resend": "resent",
  "dlq.resolve": "dead letters resolved in bulk",
  "subscription.create": "subscription created",
  "subscription.update": "subscription edited",
  "subscription.pause": "subscription paused",
  "subscription.resume": "subscription resumed",
  "subscription.disable": "subscription disabled",
  "subscription.test": "test sent",
  "subscription.secret.rotate": "signing secret rotated",
  "subscription.archive": "subscription archived",
  "subscription.unarchive": "subscription unarchived",
  "subscription.secret.expire": "old signing secret ended early",
  "user.create": "user created",
  "user.disable": "user disabled",
  "user.enable": "user enabled",
  "user.role": "user role changed",
  "user.password_change": "password changed",
  "token.create": "API token created",
  "token.revoke": "API token revoked",
  "portal.session.create": "portal link created",
  "portal.session.revoke": "portal session ended",
  "erasure.run": "subject erased",
  "retention.run": "retention run",
  "retention.policy": "retention override changed",
  "tenant.create": "tenant created",
  "tenant.rename": "tenant renamed",
  "tenant.contacts.update": "notification contacts changed",
  "notifications.settings.update": "default dead-letter threshold changed",
  "event_type.create": "event type catalogued",
  "event_type.update": "event type changed",
  "event_type.delete": "event type deleted",
  "event_type.deprecate": "event type deprecated",
};

/**
 * The same actions in a district's words, for its Audit page and a delivery's timeline: what was done, as the district
 * that owns the endpoint says it. Its viewers have never met a redrive, a tenant or a retention override; a global
 * viewer keeps the labels above and the codes, which its filter takes.
 */
export const AUDIT_ACTION_WORDS: Record<AuditAction, string> = {
  "delivery.redrive": "Sent again",
  "delivery.retry_now": "Sent now, ahead of its scheduled retry",
  "delivery.resolve": "Marked resolved",
  "delivery.resend": "Sent again after it had been delivered or resolved",
  "dlq.resolve": "Marked many dead letters resolved",
  "redrive.create": "Started sending dead letters again",
  "redrive.cancel": "Stopped sending dead letters again",
  "recover.create": "Started sending a period's deliveries again",
  "backfill.create": "Started sending earlier events to an endpoint",
  "subscription.create": "Created the subscription",
  "subscription.update": "Changed the subscription",
  "subscription.pause": "Paused deliveries",
  "subscription.resume": "Resumed deliveries",
  "subscription.disable": "Stopped deliveries: the endpoint answered that it is gone (HTTP 410)",
  "subscription.test": "Sent a test delivery",
  "subscription.secret.rotate": "Rotated the signing secret",
  "subscription.archive": "Archived the subscription",
  "subscription.unarchive": "Brought the subscription back from the archive",
  "subscription.secret.expire": "Stopped an old signing secret early",
  "user.create": "Added an account",
  "user.disable": "Turned an account off",
  "user.enable": "Turned an account back on",
  "user.role": "Changed an account's role",
  "user.password_change": "Changed an account's password",
  "token.create": "Created an API token",
  "token.revoke": "Revoked an API token",
  "portal.session.create": "Made a portal link",
  "portal.session.revoke": "Ended a portal link",
  "erasure.run": "Erased a person's data",
  "retention.run": "Removed old deliveries",
  "retention.policy": "Set how long deliveries are kept",
  "tenant.create": "Registered the district",
  "tenant.rename": "Renamed the district",
  "tenant.contacts.update": "Changed who is notified",
  "notifications.settings.update": "Changed when every district is told about dead letters",
  "event_type.create": "Added an event type to the catalog",
  "event_type.update": "Changed an event type",
  "event_type.delete": "Removed an event type from the catalog",
  "event_type.deprecate": "Marked an event type as no longer in use",
};

export const AUDIT_TARGET_TYPE_LABELS: Record<AuditTargetType, string> = {
  delivery: "delivery",
  subscription: "subscription",
  redrive_batch: "redrive batch",
  user: "user",
  api_token: "API token",
  portal_session: "portal session",
  tenant: "tenant",
  dlq: "dead-letter queue",
  erasure: "erasure",
  retention: "retention",
  event_type: "event type",
  settings: "settings",
};

/** The target types in a district's words (its Audit page's Target column and filter). */
export const AUDIT_TARGET_TYPE_WORDS: Record<AuditTargetType, string> = {
  delivery: "delivery",
  subscription: "subscription",
  redrive_batch: "deliveries sent again",
  user: "account",
  api_token: "API token",
  portal_session: "portal link",
  tenant: "district",
  dlq: "dead letters",
  erasure: "erasure",
  retention: "how long deliveries are kept",
  event_type: "event type",
  settings: "settings",
};

export const RESOLUTION_LABELS: Record<DeliveryResolution, string> = {
  discarded: "discarded",
  fixed_at_source: "fixed at the source",
  superseded: "superseded",
  erased: "erased (its payload was erased)",
};

/** The two reasons a page may show side by side (docs/GLOSSARY.md): the ledger's, and the one a person types. */
export const DEAD_LETTER_REASON_TITLE = "Dead-letter reason";
export const OPERATOR_REASON_TITLE = "Operator's reason";

/**
 * The badge a delivery carries: its state, except that a pending or scheduled delivery of a paused or disabled
 * subscription is "held" (docs/GLOSSARY.md), never "pending" beside a sentence that says it is held.
 */
export function deliveryBadgeState(state: string, subscriptionState: string | null | undefined): string {
  return (state === "pending" || state === "scheduled") && subscriptionState && subscriptionState !== "active" ? "held" : state;
}

export type Option<V extends string> = { value: V; label: string };

/** A filter's options: every name of the source list, in its order, with its label. */
export function optionsOf<V extends string>(list: readonly V[], labels: Record<V, string>): Option<V>[] {
  return list.map((value) => ({ value, label: labels[value] }));
}

/** The label of a stored value; a value the list does not know (an old row) shows as itself. */
export function labelOf<V extends string>(labels: Record<V, string>, value: string | null | undefined, fallback = "—"): string {
  if (value === null || value === undefined || value === "") return fallback;
  return Object.prototype.hasOwnProperty.call(labels, value) ? labels[value as V] : value.replace(/_/g, " ");
}

/** The ledger's filter options (the audit page builds its own from lib/audit.ts's lists on the server). */
export const DELIVERY_STATE_OPTIONS = optionsOf(DELIVERY_STATES, DELIVERY_STATE_LABELS);
export const ERROR_CLASS_OPTIONS = optionsOf(ERROR_CLASSES, ERROR_CLASS_LABELS);
export const DEAD_LETTER_REASON_OPTIONS = optionsOf(DEAD_LETTER_REASON_LIST, DEAD_LETTER_REASON_LABELS);
export const RESOLUTION_OPTIONS = optionsOf(RESOLUTIONS, RESOLUTION_LABELS);

/** An answer's words on one line: whitespace folded, so a multi-line body reads as a sentence. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * What an endpoint answered, with the status once: `HTTP 503 “Service Unavailable”`, `timeout “No answer within
 * 10000 ms”`, `HTTP 422` (never "422 HTTP 422"). `said` is the answer's stored excerpt or the error's message, shown
 * whole; one that only repeats the status ("HTTP 503", "503") is left out. `district`: a network failure in words.
 */
export function answerWords(statusCode: number | null, errorClass: string | null, said?: string | null, district = false): string {
  // A district reads a network failure in words ("Your endpoint refused the connection (…)"), not Node's code for it.
  const plain = district && !statusCode ? errorInWords(errorClass, said) : null;
  if (plain) return plain;
  const head = statusCode ? `HTTP ${statusCode}` : labelOf(ERROR_CLASS_LABELS, errorClass, "no answer");
  // Nothing the endpoint said: the stored message tells of hookledger's worker and lease.
  if (!statusCode && errorClass && INTERRUPTED_ERROR_CLASSES.includes(errorClass)) return head;
  const text = oneLine(said ?? "");
  const repeatsStatus = statusCode !== null && new RegExp(`^(HTTP\\s*)?${statusCode}$`, "i").test(text);
  return !text || repeatsStatus || text.toLowerCase() === head.toLowerCase() ? head : `${head} “${text}”`;
}
