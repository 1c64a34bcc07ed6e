// Typed errors, mapped to HTTP in one place (lib/api/handler.ts).
import { ZodError } from "zod";

const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  endpoint_auth_must_be_restated: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  event_conflict: 409,
  event_erased: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // An event's data does not match its type's JSON Schema in the event catalog (lib/catalog).
  schema_mismatch: 422,
  rate_limited: 429,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  constructor(
    public code: ErrorCode,
    message: string,
    public details?: unknown,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
  /** What an answer carries of it, under `error` (docs/API.md, Errors). */
  toApi(): { code: ErrorCode; message: string; details: unknown } {
    return { code: this.code, message: this.message, details: this.details ?? null };
  }
}

export function notFound(what: string, id: string): AppError {
  return new AppError("not_found", `${what} ${id} does not exist.`);
}

/** A zod error as a 400 naming each field. */
export function fromZod(err: ZodError, where = "body"): AppError {
  const details = err.issues.map((i) => ({ path: [where, ...i.path].join("."), message: i.message }));
  const first = details[0];
  return new AppError("validation_failed", first ? `${first.path}: ${first.message}` : "Invalid input.", details);
}

// U+0000 (NUL). PostgreSQL stores and compares no NUL in text or jsonb (SQLSTATE
// 22021), so a NUL that reached a query would fail it with a 500: refused at
// the edges instead, a 400 naming where it was. apiRoute and the proxy check the
// address (nulInAddress), readJson the body (nulInJson).
const NUL = "\u0000";
/** A name as it can be shown: its NULs written \u0000. */
const shown = (name: string) => name.replaceAll(NUL, "\\u0000");

function addressNul(where: string): AppError {
  return new AppError("validation_failed", `${where}: the address contains a NUL character (%00), which no path or query value may hold`, [
    { path: where, message: "NUL characters (%00) are not allowed" },
  ]);
}

/**
 * The refusal of a request whose address holds U+0000, or null. `url` as a
 * Request carries it (its serialisation writes a NUL as %00); `params`, the
 * route's decoded path parameters. Names the first of params.<name>, path,
 * query.<name> that holds one. `%2500` is the text "%00", not a NUL.
 */
export function nulInAddress(url: string, params: Record<string, string> = {}): AppError | null {
  for (const [name, value] of Object.entries(params)) if (value.includes(NUL)) return addressNul(`params.${shown(name)}`);
  const hasNul = (s: string) => s.includes("%00") || s.includes(NUL);
  const hash = url.indexOf("#");
  const address = hash < 0 ? url : url.slice(0, hash);
  if (!hasNul(address)) return null;
  const q = address.indexOf("?");
  if (hasNul(q < 0 ? address : address.slice(0, q))) return addressNul("path");
  for (const [k, v] of new URLSearchParams(address.slice(q + 1))) if (k.includes(NUL) || v.includes(NUL)) return addressNul(`query.${shown(k)}`);
  return addressNul("query");
}

/** At most this many places are listed in a body's refusal. */
const MAX_NUL_DETAILS = 20;

/**
 * The refusal of a parsed JSON body holding U+0000 in any string or key, at
 * any depth, or null: a 400 naming each place (as fromZod does, `body.a.0.b`),
 * in document order. Walked without recursion, so any depth JSON.parse
 * produced is walked.
 */
export function nulInJson(value: unknown, where = "body"): AppError | null {
  const details: { path: string; message: string }[] = [];
  const stack: { v: unknown; at: string; inKey: boolean }[] = [{ v: value, at: where, inKey: false }];
  while (stack.length > 0 && details.length < MAX_NUL_DETAILS) {
    const { v, at, inKey } = stack.pop()!;
    if (inKey) details.push({ path: at, message: "NUL characters (\\u0000) are not allowed in keys" });
    if (typeof v === "string") {
      if (v.includes(NUL)) details.push({ path: at, message: "NUL characters (\\u0000) are not allowed" });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], at: `${at}.${i}`, inKey: false });
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i];
        stack.push({ v: child, at: `${at}.${shown(k)}`, inKey: k.includes(NUL) });
      }
    }
  }
  const first = details[0];
  return first ? new AppError("validation_failed", `${first.path}: ${first.message}`, details) : null;
}

/**
 * SQLSTATEs of a string the database cannot hold: 22021 (character_not_in_repertoire:
 * a NUL, or bytes that are not UTF-8) and 22P05 (untranslatable_character).
 */
const UNSTORABLE_SQLSTATES = new Set(["22021", "22P05"]);

/**
 * Whether `err` is the database refusing a character: a pg error's `code`, or
 * the one a Prisma error wraps (meta.driverAdapterError.cause.originalCode; a raw
 * query's meta.code), looked for a few levels down `cause` and `meta`.
 */
function isUnstorableCharacter(err: unknown): boolean {
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 12; i++) {
    const e = queue[i];
    if (e === null || typeof e !== "object") continue;
    const o = e as Record<string, unknown>;
    if ([o.code, o.originalCode].some((c) => typeof c === "string" && UNSTORABLE_SQLSTATES.has(c))) return true;
    queue.push(o.cause, o.meta, o.driverAdapterError);
  }
  return false;
}

/**
 * The caller's error for the database refusing a character of its input (isUnstorableCharacter), null for any
 * other error: apiRoute answers it as a 400, the dashboard's actions as a message by the form.
 */
export function fromUnstorableCharacter(err: unknown): AppError | null {
  if (!isUnstorableCharacter(err)) return null;
  return new AppError(
    "bad_request",
    "The request contains a character the database cannot store (such as U+0000, NUL: \\u0000 in JSON, %00 in an address); remove it and try again.",
  );
}

/**
 * A dashboard action's refusal as one line for its form, or null for an error that is not the caller's (rethrown: the
 * error page): an AppError's message, the database refusing a character of the input, or each refused field of a
 * ZodError ("dlqThreshold: …; emails.2: …").
 */
export function actionRefusal(err: unknown): string | null {
  if (err instanceof AppError) return err.message;
  const unstorable = fromUnstorableCharacter(err);
  if (unstorable) return unstorable.message;
  if (err instanceof ZodError) return err.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ");
  return null;
}
