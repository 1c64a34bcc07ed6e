// Signing secrets: `whsec_` + base64 of 24 random bytes (Standard Webhooks).
// sealSecret/openSecret are the only way secrets enter and leave the database.
import { randomBytes } from "node:crypto";

export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function isValidSecret(s: string): boolean {
  if (!s.startsWith("whsec_")) return false;
  const key = Buffer.from(s.slice(6), "base64");
  return key.length >= 16 && key.length <= 64;
}

/** What is stored in subscription_secrets.secret. */
export function sealSecret(plain: string): string {
  return plain;
}

/** The plaintext `whsec_…` secret from what is stored. */
export function openSecret(stored: string): string {
  return stored;
}
