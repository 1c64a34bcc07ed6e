// The one shape of a delivery and of an attempt as every reader sees them: the
// dashboard's pages and JSON routes, the public /api/v1 (its view is a pick of
// this schema, lib/api/views.ts, and so is the OpenAPI document made from it),
// the bulk previews' samples and the receipts. One zod schema each; the types
// are inferred from it. Client-safe (zod and the ledger's names only), so
// client components may import them.
import { z } from "zod";
import { ATTEMPT_OUTCOMES, ATTEMPT_TRIGGERS, DEAD_LETTER_REASONS, DELIVERY_RESOLUTIONS, DELIVERY_STATES, ERROR_CLASSES, SUBSCRIPTION_STATES } from "../states";

const time = z.string().describe("ISO 8601, UTC");
const maybeTime = time.nullable();

export const ZAttemptRecord = z.object({
  id: z.string(),
  attemptNumber: z.number().int(),
  trigger: z.enum(ATTEMPT_TRIGGERS),
  actor: z.string().nullable().describe("who asked for a manual send or resend; null for the schedule's"),
  startedAt: time,
  durationMs: z.number().nullable(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  statusCode: z.number().int().nullable(),
  errorClass: z.enum(ERROR_CLASSES).nullable(),
  errorMessage: z.string().nullable(),
  retryAfterSeconds: z.number().nullable(),
  responseHeaders: z.record(z.string(), z.unknown()).nullable(),
  /** Lists carry the first 200 characters, a delivery's detail all that was kept. */
  responseExcerpt: z.string().nullable().describe("the answer's first bytes as kept"),
  workerId: z.string().nullable(),
  ambiguous: z.boolean().describe("the request may have reached the endpoint although no answer came (a timeout or reset after sending)"),
});
export type AttemptRecord = z.infer<typeof ZAttemptRecord>;

export const ZDeliveryRecord = z.object({
  id: z.string(),
  deliveryKey: z.string().describe("the same for every attempt and every redrive of this event to this subscription: the receiver's idempotency key"),
  eventId: z.string(),
  eventType: z.string(),
  subscriptionId: z.string(),
  subscriptionName: z.string(),
  tenant: z.string().nullable(),
  subscriptionState: z.enum(SUBSCRIPTION_STATES),
  state: z.enum(DELIVERY_STATES),
  attemptCount: z.number().int().describe("attempts in the current run (a redrive starts a new run)"),
  /** Attempts over the delivery's whole life. */
  totalAttempts: z.number().int(),
  /** Attempts a run may make under the subscription's retry policy. */
  maxAttempts: z.number().int(),
  /** When the next attempt is due: only for a delivery still waiting (pending, scheduled). */
  nextAttemptAt: maybeTime,
  lastAttemptAt: maybeTime,
  lastStatusCode: z.number().int().nullable(),
  lastErrorClass: z.enum(ERROR_CLASSES).nullable(),
  lastErrorMessage: z.string().nullable(),
  deadLetterReason: z.enum(DEAD_LETTER_REASONS).nullable(),
  deadLetteredAt: maybeTime,
  deliveredAt: maybeTime,
  createdAt: time,
  /**
   * An in-flight delivery's send: since when a worker holds it, when that hold ends (if no result is written by then,
   * the delivery is taken back and sent again), and whether the request's own time is up without a result recorded,
   * as when the worker sending it stopped. Null in every other state.
   */
  sending: z.object({ since: time, takenBackAt: time, overdue: z.boolean() }).nullable(),
  /** A resolved delivery's decision: which resolution, when, by whom and why (null in every other state). */
  resolution: z.object({ resolution: z.enum(DELIVERY_RESOLUTIONS), at: time, by: z.string(), reason: z.string() }).nullable(),
});
export type DeliveryRecord = z.infer<typeof ZDeliveryRecord>;

export const ZDeliveryWithAttempts = ZDeliveryRecord.extend({ attempts: z.array(ZAttemptRecord) });
export type DeliveryWithAttempts = z.infer<typeof ZDeliveryWithAttempts>;

/** A dead letter in a bulk resolve's preview: the oldest few a filter matches. */
export const ZDeadLetterSample = ZDeliveryRecord.pick({
  id: true,
  eventId: true,
  eventType: true,
  subscriptionId: true,
  deadLetterReason: true,
  lastStatusCode: true,
  lastErrorMessage: true,
  deadLetteredAt: true,
});
export type DeadLetterSample = z.infer<typeof ZDeadLetterSample>;

/** A dead letter in a bulk redrive's preview: a resolve's sample and the last error's class, which a redrive filters on. */
export const ZRedriveSample = ZDeadLetterSample.extend(ZDeliveryRecord.pick({ lastErrorClass: true }).shape);
export type RedriveSample = z.infer<typeof ZRedriveSample>;

/** A delivery in a recover's preview. */
export const ZRecoverSample = ZDeliveryRecord.pick({ id: true, eventId: true, eventType: true, state: true, createdAt: true, deliveredAt: true });
export type RecoverSample = z.infer<typeof ZRecoverSample>;
