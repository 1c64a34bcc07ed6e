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
