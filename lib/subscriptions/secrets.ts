// Signing secrets: `whsec_` + base64 of 24 random bytes (Standard Webhooks).
// sealSecret/openSecret are the only way secrets enter and leave the database:
// the column holds AES-256-GCM ciphertext under a key derived from
// HOOKLEDGER_SECRET_KEY (lib/auth/keys.ts), so a database dump reveals no secret.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveKey } from "../auth/keys";

export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function isValidSecret(s: string): boolean {
  if (!s.startsWith("whsec_")) return false;
  const key = Buffer.from(s.slice(6), "base64");
  return key.length >= 16 && key.length <= 64;
}

const VERSION = "v1";
// The version is authenticated too, so a stored value cannot be relabelled.
const AAD = Buffer.from("hookledger subscription secret v1");

/** What is stored in subscription_secrets.secret: "v1:<iv>:<tag>:<ciphertext>", base64url parts. */
export function sealSecret(plain: string): string {
  const iv = randomBytes(12); // 96-bit random nonce, as GCM recommends
  const cipher = createCipheriv("aes-256-gcm", deriveKey("subscription-secrets"), iv);
  cipher.setAAD(AAD);
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(":");
}

/** The plaintext `whsec_…` secret from what is stored. Throws if the key is wrong or the value was tampered with. */
export function openSecret(stored: string): string {
  // Rows written before encryption at rest (development databases only) still
  // open; rotating the secret replaces them with ciphertext.
  if (stored.startsWith("whsec_")) return stored;
  const parts = stored.split(":");
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new Error(
      "A stored signing secret is not in the encrypted v1 format; it was written before encryption at rest or by hand. Rotate the subscription's secret (POST /api/v1/subscriptions/:id/secrets).",
    );
  }
  const [, iv, tag, ct] = parts;
  const decipher = createDecipheriv("aes-256-gcm", deriveKey("subscription-secrets"), Buffer.from(iv, "base64url"));
  decipher.setAAD(AAD);
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error(
      "A stored signing secret does not decrypt: HOOKLEDGER_SECRET_KEY is not the key it was sealed with (or the row was altered). Use the same key on every hookledger process.",
    );
  }
}
