// The catalog page's signed example request: the exact HTTP request a district's endpoint would receive for a type's
// example, signed as the worker signs (Standard Webhooks, docs/DESIGN.md invariant 10) with a published example
// secret, so a district can feed it to its own verifier before real traffic arrives. The secret is fixed and public on
// purpose: it signs nothing but these examples.
import "server-only";
import { deliveryKey } from "../ledger/delivery-key";
import { USER_AGENT } from "../net/sender";
import { signatureHeader } from "../signing/standard-webhooks";

/** The example secret: `whsec_` and the base64 of the 32 ASCII bytes below. Never a subscription's secret. */
export const EXAMPLE_SECRET = `whsec_${Buffer.from("hookledger-catalog-example-key-1").toString("base64")}`;
/** The subscription and endpoint the example is addressed to (the webhook-id is derived from them as for real). */
const EXAMPLE_SUBSCRIPTION_ID = "sub_example";
const EXAMPLE_URL = "https://district.example/webhooks/hookledger";

export type SignedExample = { method: "POST"; url: string; headers: [string, string][]; body: string; secret: string };

/**
 * The request for `type`'s example `data`, as sent at `now`. Signed at `now` because verifiers refuse a timestamp
 * more than five minutes off: the page signs it when it is shown.
 */
export function signedExampleRequest(type: string, data: Record<string, unknown>, now: Date): SignedExample {
  const eventId = `evt_example_${type.replace(/\./g, "_")}`;
  const timestamp = Math.floor(now.getTime() / 1000);
  // The envelope as lib/events/publish.ts envelopeBytes builds it for every real event.
  const body = JSON.stringify({ id: eventId, type, timestamp: new Date(timestamp * 1000).toISOString(), data });
  const id = deliveryKey(EXAMPLE_SUBSCRIPTION_ID, eventId);
  return {
    method: "POST",
    url: EXAMPLE_URL,
    headers: [
      ["content-type", "application/json"],
      ["user-agent", USER_AGENT],
      ["webhook-id", id],
      ["idempotency-key", id],
      ["webhook-timestamp", String(timestamp)],
      ["webhook-signature", signatureHeader([EXAMPLE_SECRET], id, timestamp, Buffer.from(body, "utf8"))],
    ],
    body,
    secret: EXAMPLE_SECRET,
  };
}

/** The request as text, as a district would see it on the wire (the body as sent, one line). */
export function requestText(r: SignedExample): string {
  const u = new URL(r.url);
  return [`${r.method} ${u.pathname} HTTP/1.1`, `host: ${u.host}`, ...r.headers.map(([k, v]) => `${k}: ${v}`), "", r.body].join("\n");
}
