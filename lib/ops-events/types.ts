// hookledger's own operational events (Svix's "operational webhooks"). They are
// published by triggers (prisma/migrations/0006_observability) or by the code
// that makes the change (a secret rotation), in the same transaction as the change they report, to every subscription whose
// eventTypes name the type: subscribe with e.g.
//   {"name": "On-call", "url": "https://chat.example/hook", "eventTypes": ["hookledger.delivery.dead_lettered"]}
// A subscription with a tenant hears only about its own tenant's subscriptions.
// "*" does not match them. Deliveries of these events never produce further
// operational events.
export const OPS_EVENT_TYPES = [
  "hookledger.delivery.dead_lettered",
  "hookledger.dlq.threshold_exceeded",
  "hookledger.subscription.disabled",
  "hookledger.subscription.paused",
  "hookledger.subscription.recovered",
  "hookledger.subscription.secret_rotated",
] as const;
export type OpsEventType = (typeof OPS_EVENT_TYPES)[number];

/** The `data` of each type (the envelope is the usual {id, type, timestamp, data}). */
export type OpsEventData = {
  "hookledger.delivery.dead_lettered": {
    deliveryId: string;
    deliveryKey: string;
    eventId: string;
    eventType: string;
    subscriptionId: string;
    subscriptionName: string;
    reason: string | null;
    attempts: number;
    lastStatusCode: number | null;
    lastErrorClass: string | null;
    lastErrorMessage: string | null;
    deadLetteredAt: string | null;
  };
  "hookledger.dlq.threshold_exceeded": { subscriptionId: string; subscriptionName: string; depth: number; threshold: number };
  "hookledger.subscription.disabled": { subscriptionId: string; subscriptionName: string; url: string; reason: string | null; previousState: string };
  /** A subscription paused for failing (migration 0016): every attempt failed for its policy's window. Its deliveries are held, and the endpoint is probed. */
  "hookledger.subscription.paused": {
    subscriptionId: string;
    subscriptionName: string;
    url: string;
    reason: "failing";
    pausedAt: string;
    failingSince: string;
    failedAttempts: number;
    nextProbeAt: string;
  };
  /**
   * The subscription delivers again: a delivery succeeded after a dead-letter
   * (`deliveryId` set), or a probe was answered 2xx and resumed a subscription
   * paused for failing (`deliveryId` null, `probe` set).
   */
  "hookledger.subscription.recovered": {
    subscriptionId: string;
    subscriptionName: string;
    failingSince: string | null;
    recoveredAt: string;
    deliveryId: string | null;
    probe?: { status: number; latencyMs: number; at: string };
  };
  /** A new signing secret was added (lib/subscriptions/rotation.ts); the previous ones sign until their expiry. Ids and times only, never a secret. */
  "hookledger.subscription.secret_rotated": {
    subscriptionId: string;
    subscriptionName: string;
    secretId: string;
    rotatedAt: string;
    overlapSeconds: number;
    previous: { id: string; expiresAt: string | null }[];
    actor: string;
  };
};
