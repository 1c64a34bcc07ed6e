// Password hashing with node:crypto scrypt at OWASP's minimum for scrypt
// (N=2^17, r=8, p=1: 128 MiB and a few hundred milliseconds per hash), a
// 16-byte salt, compared in constant time. Hashes made with weaker parameters
// still verify and are replaced at the user's next sign-in (needsRehash).
import "server-only";
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { envInt } from "../env";
import { AppError } from "../errors";

export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEYLEN = 32;

/**
 * At most this many hashes at once per process: each takes 128 MiB and one of
 * libuv's four threads, which DNS lookups and file reads need too. The rest
 * wait their turn.
 */
const MAX_CONCURRENT = 2;
/**
 * How many may wait. The sign-in limit counts per email and address, so
 * requests from many addresses (or for many emails) could still each queue a
 * hash, and an unbounded queue is CPU and memory for as long as they keep
 * coming. 16 waiting is a few seconds of hashing at two at once.
 */
export const PASSWORD_HASH_QUEUE = envInt("HOOKLEDGER_PASSWORD_HASH_QUEUE", { default: 16, min: 0, max: 1000 });
/** What a refused caller is told to wait: about the time the queue takes to drain. */
export const PASSWORD_HASH_RETRY_AFTER_SECONDS = 2;
let running = 0;
const waiting: (() => void)[] = [];

/** True when a hash asked for now would be refused: the sign-in checks it before recording an attempt. */
export function passwordHashingBusy(): boolean {
  return running >= MAX_CONCURRENT && waiting.length >= PASSWORD_HASH_QUEUE;
}

/** 503: the queue is full. Its details carry the Retry-After the sign-in answers with. */
export class PasswordHashingBusy extends AppError {
  constructor() {
    super("unavailable", `Too many passwords are being checked right now. Try again in ${PASSWORD_HASH_RETRY_AFTER_SECONDS} seconds.`, {
      retryAfterSeconds: PASSWORD_HASH_RETRY_AFTER_SECONDS,
    });
  }
}

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    // Refused at once, before anything is held: a full queue costs the caller nothing and the process no scrypt.
    if (waiting.length >= PASSWORD_HASH_QUEUE) throw new PasswordHashingBusy();
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  // maxmem must exceed scrypt's 128·N·r bytes, or node refuses the parameters.
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r };
  return withSlot(() => new Promise((resolve, reject) => scryptCb(password.normalize("NFKC"), salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key)))));
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = SCRYPT_PARAMS;
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, N, r, p);
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

function parse(stored: string) {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return null;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  // Parameters come from our own column, but a corrupt row must not ask for a terabyte.
  if (![n, r, p].every(Number.isSafeInteger) || n < 2 || n > 2 ** 20 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  return { n, r, p, salt: Buffer.from(parts[4], "base64"), expected: Buffer.from(parts[5], "base64") };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const h = parse(stored);
  if (!h) return false;
  const actual = await scrypt(password, h.salt, h.n, h.r, h.p);
  return actual.length === h.expected.length && timingSafeEqual(actual, h.expected);
}

/** True when a stored hash was made with weaker parameters than today's (rehash it after a successful sign-in). */
export function needsRehash(stored: string): boolean {
  const h = parse(stored);
  return !h || h.n < SCRYPT_PARAMS.N || h.r < SCRYPT_PARAMS.r || h.p < SCRYPT_PARAMS.p;
}

/** A hash of a random password, to spend the same time when the email is unknown. */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  // A refusal (the queue was full) must not be remembered as the dummy forever.
  dummy ??= hashPassword(randomBytes(16).toString("hex")).catch((err: unknown) => {
    dummy = undefined;
    throw err;
  });
  return dummy;
}

/** A one-time password for a new user: 20 characters of base64url (120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString("base64url");
}
