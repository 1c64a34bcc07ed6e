import { createHash } from "node:crypto";

/**
 * Invariant 1 (docs/DESIGN.md): identity belongs to the event, never to the
 * attempt. The same on every attempt and every redrive; sent as `webhook-id`
 * and `Idempotency-Key`. The ledger derives it in SQL, once, in
 * hl_delivery_key (migration 0011); this copy is for receivers and tests, and
 * test/delivery/delivery-key.test.ts holds the two equal.
 */
export function deliveryKey(subscriptionId: string, eventId: string): string {
  return createHash("sha256").update(`${subscriptionId}:${eventId}`).digest("hex");
}
