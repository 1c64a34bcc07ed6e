// Standard Webhooks signatures (docs/DESIGN.md invariant 10): HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>" with the base64 key after `whsec_`,
// one `v1,<base64>` per active secret, space-separated during a rotation.
import "server-only";
import { createHmac } from "node:crypto";

export function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  return Buffer.from(b64, "base64");
}

/** One `v1,<base64>` signature of the exact bytes sent. */
export function signOne(key: Buffer, id: string, timestamp: number, body: Buffer): string {
  const mac = createHmac("sha256", key);
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

/** The `webhook-signature` header value for the given plaintext `whsec_` secrets. */
export function signatureHeader(secrets: (string | Buffer)[], id: string, timestamp: number, body: Buffer): string {
  return secrets.map((s) => signOne(typeof s === "string" ? secretKey(s) : s, id, timestamp, body)).join(" ");
}
