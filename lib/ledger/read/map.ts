// Rows of deliveries (joined to their subscription) and attempts, mapped to
// the one read shape (./types.ts). Every finder selects these columns.
import { parseRetryPolicy } from "../retry-policy";
import { iso, num, raw, sql } from "./db";
import type { AttemptRecord, DeliveryRecord } from "./types";

/** A delivery's row as DELIVERY_COLUMNS selects it: d = deliveries, s = its subscription. */
export type DeliveryRow = {
  id: string;
  delivery_key: string;
  event_id: string;
  event_type: string;
  subscription_id: string;
  subscription_name: string;
  tenant: string | null;
  subscription_state: string;
  retry_policy: unknown;
  state: string;
  attempt_count: number;
  total_attempts: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error_class: string | null;
  last_error_message: string | null;
  dead_letter_reason: string | null;
  dead_lettered_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  resolution: string | null;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution_reason: string | null;
  leased_at: Date | null;
  lease_until: Date | null;
  /** Seconds since the lease began, by the database's clock (the one the lease was set by). */
  leased_seconds: number | string | null;
};

// Where each column of a DeliveryRow comes from: one entry per field of the row type, no more (the compiler checks
// both), so the SQL list cannot drift from the row; test/dashboard/dashboard-read-model.test.ts holds the row's fields
// to the schema's (ZDeliveryRecord).
const DELIVERY_SOURCES: Record<keyof DeliveryRow, string> = {
  id: "d.id",
  delivery_key: "d.delivery_key",
  event_id: "d.event_id",
  event_type: "d.event_type",
  subscription_id: "d.subscription_id",
  subscription_name: "s.name",
  tenant: "s.tenant",
  subscription_state: "s.state",
  retry_policy: "s.retry_policy",
  state: "d.state",
  attempt_count: "d.attempt_count",
  total_attempts: "d.total_attempts",
  next_attempt_at: "d.next_attempt_at",
  last_attempt_at: "d.last_attempt_at",
  last_status_code: "d.last_status_code",
  last_error_class: "d.last_error_class",
  last_error_message: "d.last_error_message",
  dead_letter_reason: "d.dead_letter_reason",
  dead_lettered_at: "d.dead_lettered_at",
  delivered_at: "d.delivered_at",
  created_at: "d.created_at",
  resolution: "d.resolution",
  resolved_at: "d.resolved_at",
  resolved_by: "d.resolved_by",
  resolution_reason: "d.resolution_reason",
  leased_at: "d.leased_at",
  lease_until: "d.lease_until",
  leased_seconds: "EXTRACT(EPOCH FROM now() - d.leased_at)::float8",
};

/** Past the request's timeout by this much with no result written: the send is overdue (the worker may have stopped). */
const OVERDUE_GRACE_SECONDS = 5;

function sendingOf(r: DeliveryRow, timeoutMs: number): DeliveryRecord["sending"] {
  if (r.state !== "in_flight" || !r.leased_at || !r.lease_until) return null;
  return {
    since: iso(r.leased_at)!,
    takenBackAt: iso(r.lease_until)!,
    overdue: Number(r.leased_seconds ?? 0) > timeoutMs / 1000 + OVERDUE_GRACE_SECONDS,
  };
}

/** Columns of a DeliveryRow (a constant of this code base: no value is spliced). */
export const DELIVERY_COLUMNS = raw(
  Object.entries(DELIVERY_SOURCES)
    .map(([name, source]) => (source.endsWith(`.${name}`) ? source : `${source} AS ${name}`))
    .join(", "),
);

/** The record of a row. Its names are the ledger's lists: the CHECK constraints hold states, resolutions, triggers and outcomes to them, and the writers (lib/ledger/classify.ts) the error classes and reasons. */
export function toDeliveryRecord(r: DeliveryRow): DeliveryRecord {
  const policy = parseRetryPolicy(r.retry_policy);
  return {
    id: r.id,
    deliveryKey: r.delivery_key,
    eventId: r.event_id,
    eventType: r.event_type,
    subscriptionId: r.subscription_id,
    subscriptionName: r.subscription_name,
    tenant: r.tenant,
    subscriptionState: r.subscription_state as DeliveryRecord["subscriptionState"],
    state: r.state as DeliveryRecord["state"],
    attemptCount: num(r.attempt_count),
    totalAttempts: num(r.total_attempts),
    maxAttempts: policy.maxAttempts,
    nextAttemptAt: r.state === "pending" || r.state === "scheduled" ? iso(r.next_attempt_at) : null,
    lastAttemptAt: iso(r.last_attempt_at),
    lastStatusCode: r.last_status_code,
    lastErrorClass: r.last_error_class as DeliveryRecord["lastErrorClass"],
    lastErrorMessage: r.last_error_message,
    deadLetterReason: r.dead_letter_reason as DeliveryRecord["deadLetterReason"],
    deadLetteredAt: iso(r.dead_lettered_at),
    deliveredAt: iso(r.delivered_at),
    createdAt: iso(r.created_at)!,
    resolution: r.resolution
      ? {
          resolution: r.resolution as NonNullable<DeliveryRecord["resolution"]>["resolution"],
          at: iso(r.resolved_at)!,
          by: r.resolved_by ?? "",
          reason: r.resolution_reason ?? "",
        }
      : null,
    sending: sendingOf(r, policy.timeoutMs),
  };
}

/** Columns of an AttemptRecord from attempts (unaliased); the excerpt cut to `excerptChars` when given. */
export function attemptColumns(excerptChars?: number) {
  const excerpt = excerptChars === undefined ? sql`response_excerpt` : sql`left(response_excerpt, ${excerptChars}::int) AS response_excerpt`;
  return sql`id, delivery_id, attempt_number, trigger, actor, started_at, duration_ms, outcome, status_code,
    error_class, error_message, retry_after_seconds, response_headers, ${excerpt}, worker_id, ambiguous`;
}

export type AttemptRow = {
  id: number | bigint | string;
  delivery_id: string;
  attempt_number: number;
  trigger: string;
  actor: string | null;
  started_at: Date;
  duration_ms: number | null;
  outcome: string;
  status_code: number | null;
  error_class: string | null;
  error_message: string | null;
  retry_after_seconds: number | null;
  response_headers: Record<string, unknown> | null;
  response_excerpt: string | null;
  worker_id: string | null;
  ambiguous: boolean;
};

export function toAttemptRecord(a: AttemptRow): AttemptRecord {
  return {
    id: String(a.id),
    attemptNumber: a.attempt_number,
    trigger: a.trigger as AttemptRecord["trigger"],
    actor: a.actor,
    startedAt: iso(a.started_at)!,
    durationMs: a.duration_ms,
    outcome: a.outcome as AttemptRecord["outcome"],
    statusCode: a.status_code,
    errorClass: a.error_class as AttemptRecord["errorClass"],
    errorMessage: a.error_message,
    retryAfterSeconds: a.retry_after_seconds,
    responseHeaders: a.response_headers,
    responseExcerpt: a.response_excerpt,
    workerId: a.worker_id,
    ambiguous: a.ambiguous,
  };
}
