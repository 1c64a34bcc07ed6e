// Signing secrets: `whsec_` + base64 of 24 random bytes (Standard Webhooks).
// sealSecret/openSecret are the only way secrets enter and leave the database:
// the column holds AES-256-GCM ciphertext under a key derived from
// HOOKLEDGER_SECRET_KEY (lib/auth/keys.ts), so a database dump reveals no secret.
//
// Stored as "v2:<key id>:<iv>:<tag>:<ciphertext>" (base64url parts). The
// associated data binds the ciphertext to its row (subscription id and secret
// id), so a value copied onto another subscription's row does not open: a
// database writer cannot make subscription A sign with B's secret. The key id
// says which key sealed it, so HOOKLEDGER_SECRET_KEY can be rotated:
// HOOKLEDGER_SECRET_KEY_PREVIOUS opens old rows while `hookledger secrets
// rekey` re-seals them. Older formats (plaintext `whsec_`, unbound "v1") are
// never used to sign: `hookledger start` and `secrets rekey` convert them.
import "server-only";
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { PrismaClient } from "../db/prisma";
import { secretKey, secretsKeyring, PREVIOUS_KEYS_ENV, type SecretsKey } from "../auth/keys";

export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function isValidSecret(s: string): boolean {
  if (!s.startsWith("whsec_")) return false;
  const key = Buffer.from(s.slice(6), "base64");
  return key.length >= 16 && key.length <= 64;
}

/** The row a sealed secret belongs to (subscription_secrets.id and .subscription_id). */
export type SecretRow = { id: string; subscriptionId: string };

const VERSION = "v2";

function aad(row: SecretRow): Buffer {
  // The version is authenticated too, so a stored value cannot be relabelled.
  return Buffer.from(`hookledger subscription secret v2\0${row.subscriptionId}\0${row.id}`);
}

/** What is stored in subscription_secrets.secret for `plain` on `row`, sealed under the current key. */
export function sealSecret(plain: string, row: SecretRow): string {
  const { id, key } = secretsKeyring()[0];
  const iv = randomBytes(12); // 96-bit random nonce, as GCM recommends
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad(row));
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [VERSION, id, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(":");
}

/** The id of the key a stored value was sealed with, or null if it is not in the current format. */
function sealedWith(stored: string): string | null {
  const parts = stored.split(":");
  return parts.length === 5 && parts[0] === VERSION ? parts[1] : null;
}

/** The plaintext `whsec_…` secret of `row` from what is stored. Throws if it is not this row's, the key is unknown, or it was altered. */
export function openSecret(stored: string, row: SecretRow): string {
  const parts = stored.split(":");
  if (parts.length !== 5 || parts[0] !== VERSION)
    throw new Error(
      `The signing secret ${row.id} of ${row.subscriptionId} is not in the encrypted v2 format (written before row binding, or by hand). Run \`hookledger secrets rekey\` to convert it.`,
    );
  const [, kid, iv, tag, ct] = parts;
  const key = secretsKeyring().find((k) => k.id === kid);
  if (!key)
    throw new Error(
      `The signing secret ${row.id} was sealed with key ${kid}, which this process does not have: HOOKLEDGER_SECRET_KEY must be the same on every hookledger process (during a rotation, the old key goes in ${PREVIOUS_KEYS_ENV} until \`hookledger secrets rekey\` has run).`,
    );
  const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(iv, "base64url"));
  decipher.setAAD(aad(row));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error(`The signing secret ${row.id} of ${row.subscriptionId} does not decrypt: it was altered, or copied from another row.`);
  }
}

/**
 * The sealed columns of a subscription's endpoint authentication: its extra
 * request headers (JSON of name → value) and its client certificate (JSON of
 * PEMs). Sealed exactly like signing secrets, under the same key and format,
 * with associated data naming the subscription and the column: a value copied
 * onto another subscription, or from the headers column into the TLS one,
 * does not open.
 */
type EndpointColumn = "headers" | "tls";
export type EndpointRow = { subscriptionId: string; column: EndpointColumn };

function endpointAad(row: EndpointRow): Buffer {
  return Buffer.from(`hookledger endpoint ${row.column} v2\0${row.subscriptionId}`);
}

export function sealEndpointValue(plain: string, row: EndpointRow): string {
  const { id, key } = secretsKeyring()[0];
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(endpointAad(row));
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [VERSION, id, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(":");
}

/** The plaintext of a sealed endpoint column. Throws, naming the subscription and column (never the value), if it cannot be opened. */
export function openEndpointValue(stored: string, row: EndpointRow): string {
  const parts = stored.split(":");
  const what = `The endpoint ${row.column === "tls" ? "client certificate" : "headers"} of ${row.subscriptionId}`;
  if (parts.length !== 5 || parts[0] !== VERSION) throw new Error(`${what} are not in the encrypted v2 format.`);
  const [, kid, iv, tag, ct] = parts;
  const key = secretsKeyring().find((k) => k.id === kid);
  if (!key)
    throw new Error(
      `${what} were sealed with key ${kid}, which this process does not have: HOOKLEDGER_SECRET_KEY must be the same on every hookledger process (during a rotation, the old key goes in ${PREVIOUS_KEYS_ENV} until \`hookledger secrets rekey\` has run).`,
    );
  const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(iv, "base64url"));
  decipher.setAAD(endpointAad(row));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error(`${what} do not decrypt: they were altered, or copied from another row.`);
  }
}

/** The legacy "v1:<iv>:<tag>:<ct>" format (no row binding, no key id), for conversion only. */
function openV1(stored: string, keys: Buffer[]): string {
  const [, iv, tag, ct] = stored.split(":");
  for (const master of keys) {
    const key = Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), "hookledger subscription-secrets v1", 32));
    try {
      const d = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      d.setAAD(Buffer.from("hookledger subscription secret v1"));
      d.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([d.update(Buffer.from(ct, "base64url")), d.final()]).toString("utf8");
    } catch {
      /* try the next key */
    }
  }
  throw new Error("a v1 signing secret does not decrypt under HOOKLEDGER_SECRET_KEY or HOOKLEDGER_SECRET_KEY_PREVIOUS");
}

function masterKeys(): Buffer[] {
  const prev = (process.env[PREVIOUS_KEYS_ENV] ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  return [secretKey(), ...prev.map((k) => (/^[0-9a-f]{64}$/i.test(k) ? Buffer.from(k, "hex") : Buffer.from(k, "base64")))];
}

export type RekeyResult = { total: number; resealed: number; converted: number; current: number; failed: { id: string; error: string }[] };

/**
 * Re-seals every stored secret under the current key: rows sealed with a
 * previous key, unbound v1 rows and plaintext `whsec_` rows. Each row is
 * updated only if it still holds what was read (a concurrent rotation wins).
 * Safe to run again; a row that cannot be opened is reported, not changed.
 */
export async function rekeySecrets(prisma: PrismaClient, opts: { legacyOnly?: boolean } = {}): Promise<RekeyResult> {
  const current: SecretsKey = secretsKeyring()[0];
  const rows = await prisma.subscriptionSecret.findMany({ select: { id: true, subscriptionId: true, secret: true } });
  const out: RekeyResult = { total: rows.length, resealed: 0, converted: 0, current: 0, failed: [] };
  for (const row of rows) {
    const kid = sealedWith(row.secret);
    if (kid === current.id || (kid && opts.legacyOnly)) {
      out.current++;
      continue;
    }
    try {
      const plain = kid ? openSecret(row.secret, row) : row.secret.startsWith("whsec_") ? row.secret : openV1(row.secret, masterKeys());
      if (!isValidSecret(plain)) throw new Error("the stored value does not open to a whsec_ secret");
      const n = await prisma.subscriptionSecret.updateMany({ where: { id: row.id, secret: row.secret }, data: { secret: sealSecret(plain, row) } });
      if (n.count) {
        if (kid) out.resealed++;
        else out.converted++;
      }
    } catch (err) {
      out.failed.push({ id: row.id, error: (err as Error).message });
    }
  }
  // Endpoint headers and client certificates are sealed under the same key, so a key rotation re-seals them too.
  const subs = await prisma.subscription.findMany({
    where: { OR: [{ endpointHeaders: { not: null } }, { endpointTls: { not: null } }] },
    select: { id: true, endpointHeaders: true, endpointTls: true },
  });
  for (const sub of subs) {
    for (const column of ["headers", "tls"] as const) {
      const stored = column === "headers" ? sub.endpointHeaders : sub.endpointTls;
      if (!stored) continue;
      const id = `${sub.id}/${column}`;
      out.total++;
      const kid = sealedWith(stored);
      if (kid === current.id || opts.legacyOnly) {
        out.current++;
        continue;
      }
      try {
        const row = { subscriptionId: sub.id, column };
        const resealed = sealEndpointValue(openEndpointValue(stored, row), row);
        const n = await prisma.subscription.updateMany({
          where: column === "headers" ? { id: sub.id, endpointHeaders: stored } : { id: sub.id, endpointTls: stored },
          data: column === "headers" ? { endpointHeaders: resealed } : { endpointTls: resealed },
        });
        if (n.count) out.resealed++;
      } catch (err) {
        out.failed.push({ id, error: (err as Error).message });
      }
    }
  }
  return out;
}

/** For tests and the rekey command: the current key's id. */
export function currentSecretsKeyId(): string {
  return secretsKeyring()[0].id;
}
