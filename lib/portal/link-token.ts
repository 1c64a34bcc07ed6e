// Portal link tokens: base64url(8 id bytes + 32 random bytes + a 16-byte HMAC-SHA256 tag) under a key derived from
// HOOKLEDGER_SECRET_KEY (lib/auth/keys.ts). The tag is checked before anything is read from the database, so a
// tampered or invented link costs no query; the database keeps only the token's sha256 (portal_sessions.token_hash).
import "server-only";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { portalLinkKey } from "../auth/keys";
import { hashToken } from "../auth/tokens";

const ID_BYTES = 8;
const RANDOM_BYTES = 32;
const TAG_BYTES = 16;
const TOKEN_BYTES = ID_BYTES + RANDOM_BYTES + TAG_BYTES;
const ID_PREFIX = "ps_";

function tag(body: Buffer): Buffer {
  return createHmac("sha256", portalLinkKey()).update("hookledger portal link v1\n").update(body).digest().subarray(0, TAG_BYTES);
}

/** A new portal session id and the link token that names it. */
export function newPortalLink(): { id: string; token: string; tokenHash: string } {
  const idBytes = randomBytes(ID_BYTES);
  const body = Buffer.concat([idBytes, randomBytes(RANDOM_BYTES)]);
  const token = Buffer.concat([body, tag(body)]).toString("base64url");
  return { id: ID_PREFIX + idBytes.toString("hex"), token, tokenHash: hashToken(token) };
}

/** The session id a token names when its tag is right; null for anything else (wrong length, altered, foreign key). */
export function verifyPortalLink(token: string | null | undefined): { id: string; tokenHash: string } | null {
  if (!token || token.length > 128 || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  const bytes = Buffer.from(token, "base64url");
  // Only the canonical spelling: another base64url text of the same bytes would be another token_hash.
  if (bytes.length !== TOKEN_BYTES || bytes.toString("base64url") !== token) return null;
  const body = bytes.subarray(0, ID_BYTES + RANDOM_BYTES);
  if (!timingSafeEqual(bytes.subarray(ID_BYTES + RANDOM_BYTES), tag(body))) return null;
  return { id: ID_PREFIX + body.subarray(0, ID_BYTES).toString("hex"), tokenHash: hashToken(token) };
}
