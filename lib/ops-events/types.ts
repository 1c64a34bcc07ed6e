// hookledger's own operational events (Svix's "operational webhooks"). They are
// published by triggers (prisma/migrations/0006_observability), in the same
// transaction as the change they report, to every subscription whose
// eventTypes name the type: subscribe with e.g.
//   {"name": "On-call", "url": "https://chat.example/hook", "eventTypes": ["hookledger.delivery.dead_lettered"]}
// A subscription with a tenant hears only about its own tenant's subscriptions.
// "*" does not match them. Deliveries of these events never produce further
// operational events.
export const OPS_EVENT_TYPES = [
  "hookledger.delivery.dead_lettered",
  "hookledger.dlq.threshold_exceeded",
  "hookledger.subscription.disabled",
  "hookledger.subscription.recovered",
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
  "hookledger.subscription.recovered": { subscriptionId: string; subscriptionName: string; failingSince: string; recoveredAt: string; deliveryId: string };
};
