// The shapes the API answers with, for the OpenAPI document's response
// schemas (lib/api/openapi.ts) and the typed client's readers: a subscription,
// a delivery and its attempts. test/openapi.test.ts parses real answers of the
// routes with these schemas and compares the result with the answer, so a field added to or dropped from a
// view (lib/subscriptions/service.ts toSubscriptionView, lib/deliveries/queries.ts
// toDeliveryView, lib/ledger/read) fails there until this file says so too.
import "server-only";
import { z } from "zod";
import { ATTEMPT_OUTCOMES, ATTEMPT_TRIGGERS, DEAD_LETTER_REASONS, DELIVERY_RESOLUTIONS, DELIVERY_STATES, ERROR_CLASSES, SUBSCRIPTION_STATES } from "../ledger/states";
import { ZFailurePolicy, ZRetryPolicy } from "../subscriptions/schema";

const time = z.string().describe("ISO 8601, UTC");
const maybeTime = time.nullable();

export const ZAttemptView = z.object({
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
  responseExcerpt: z.string().nullable().describe("the answer's first bytes as kept"),
  workerId: z.string().nullable(),
  ambiguous: z.boolean().describe("the request may have reached the endpoint although no answer came (a timeout or reset after sending)"),
});

export const ZDeliveryView = z.object({
  id: z.string(),
  deliveryKey: z.string().describe("the same for every attempt and every redrive of this event to this subscription: the receiver's idempotency key"),
  eventId: z.string(),
  eventType: z.string(),
  subscriptionId: z.string(),
  state: z.enum(DELIVERY_STATES),
  attemptCount: z.number().int().describe("attempts in the current run (a redrive starts a new run)"),
  totalAttempts: z.number().int(),
  nextAttemptAt: maybeTime,
  lastAttemptAt: maybeTime,
  lastStatusCode: z.number().int().nullable(),
  lastErrorClass: z.enum(ERROR_CLASSES).nullable(),
  lastErrorMessage: z.string().nullable(),
  deadLetterReason: z.enum(DEAD_LETTER_REASONS).nullable(),
  deadLetteredAt: maybeTime,
  deliveredAt: maybeTime,
  createdAt: time,
  resolution: z.object({ resolution: z.enum(DELIVERY_RESOLUTIONS), at: time, by: z.string(), reason: z.string() }).nullable(),
});

export const ZDeliveryPage = z.object({ items: z.array(ZDeliveryView), nextCursor: z.string().nullable() });
export const ZDeliveryWithAttempts = ZDeliveryView.extend({ attempts: z.array(ZAttemptView) });

export const ZSubscriptionView = z.object({
  id: z.string(),
  name: z.string(),
  tenant: z.string().nullable(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  state: z.enum(SUBSCRIPTION_STATES),
  stateReason: z.string().nullable(),
  retryPolicy: ZRetryPolicy.nullable(),
  rateLimitPerSecond: z.number().nullable(),
  maxConcurrency: z.number().int(),
  createdAt: time,
  updatedAt: time,
  headers: z.record(z.string(), z.string()).nullable().describe("header names with masked values; never the values"),
  tls: z.union([
    z.object({ set: z.literal(false) }),
    z.object({ set: z.literal(true), subject: z.string(), issuer: z.string(), expiresAt: time, fingerprint256: z.string(), ca: z.boolean() }),
  ]),
  pausedReason: z.enum(["manual", "failing"]).nullable(),
  pausedAt: maybeTime,
  failurePolicy: ZFailurePolicy.nullable(),
  health: z.object({
    failingSince: maybeTime,
    failedAttempts: z.number().int(),
    lastProbe: z.object({ at: time, status: z.number().int().nullable(), error: z.string().nullable(), latencyMs: z.number().nullable() }).nullable(),
    nextProbeAt: maybeTime,
    probeCount: z.number().int(),
  }),
  archivedAt: maybeTime,
  archiveReason: z.string().nullable(),
  archivedBy: z.string().nullable(),
});

export const ZSubscriptionList = z.object({ items: z.array(ZSubscriptionView) });
/** A create's answer: the signing secret, this once. */
export const ZSubscriptionCreated = ZSubscriptionView.extend({ secret: z.string() });
