import { createHash } from "node:crypto";

/**
 * Invariant 1 (DESIGN.md): identity belongs to the event, never to the attempt.
 * The same on every attempt and every redrive; sent as `webhook-id` and
 * `Idempotency-Key`. The SQL in lib/events/publish.ts computes the same value.
 */
export function deliveryKey(subscriptionId: string, eventId: string): string {
  return createHash("sha256").update(`${subscriptionId}:${eventId}`).digest("hex");
}
