// The one shape of a delivery and of an attempt as every reader sees them: the
// dashboard's pages and JSON routes, the public /api/v1 (which maps its
// response from these, lib/deliveries/queries.ts) and the receipts. Types
// only, so client components may import them.

export type AttemptRecord = {
  id: string;
  attemptNumber: number;
  trigger: string;
  actor: string | null;
  startedAt: string;
  durationMs: number | null;
  outcome: string;
  statusCode: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  retryAfterSeconds: number | null;
  responseHeaders: Record<string, unknown> | null;
  /** The answer's first bytes; lists carry the first 200 characters, a delivery's detail all that was kept. */
  responseExcerpt: string | null;
  workerId: string | null;
  ambiguous: boolean;
};

export type DeliveryRecord = {
  id: string;
  deliveryKey: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  subscriptionName: string;
  tenant: string | null;
  subscriptionState: string;
  state: string;
  /** Attempts in the current run (reset by a redrive). */
  attemptCount: number;
  /** Attempts over the delivery's whole life. */
  totalAttempts: number;
  /** Attempts a run may make under the subscription's retry policy. */
  maxAttempts: number;
  /** When the next attempt is due: only for a delivery still waiting (pending, scheduled). */
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastErrorClass: string | null;
  lastErrorMessage: string | null;
  deadLetterReason: string | null;
  deadLetteredAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  /** A resolved delivery's decision: which resolution, when, by whom and why (null in every other state). */
  resolution: { resolution: string; at: string; by: string; reason: string } | null;
};

export type DeliveryWithAttempts = DeliveryRecord & { attempts: AttemptRecord[] };
