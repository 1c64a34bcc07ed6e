// Every /api/v1 route goes through `apiRoute`: authentication, the permission
// table, and the one mapping from errors to HTTP answers (docs/STYLE.md #5).
import "server-only";
import { ZodError, type ZodType } from "zod";
import { AppError, fromUnstorableCharacter, fromZod, nulInAddress, nulInJson } from "../errors";
import { can, canAs, confinedRefusal, roleRefusal, type Permission } from "../auth/permissions";
import { endedSessionOf, principalFromRequest, type Principal } from "../auth/principal";
import { SAFE_METHODS, assertCsrf } from "../auth/csrf";
import { logger } from "../log";
import { withHttpMetrics } from "../metrics/http";
import { envInt } from "../env";
import { readBodyOf, withAnswerBytes, type ApiRequest } from "./bodies";
import { isDatabaseUnavailable, isStatementTimeout } from "../db/unavailable";
import { REQUEST_STATEMENT_TIMEOUT_MS } from "../db/pool";

/** Seconds a caller is asked to wait when the database is not answering: about a restart's length. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export type RouteContext = { params: Promise<Record<string, string>> };
export type Handler = (args: { req: ApiRequest; principal: Principal; params: Record<string, string> }) => Promise<Response>;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  // Encoded once, here: a Response made from a string measures its UTF-8 length by scanning it
  // (about 2 ms for a batch's 270 KB answer), and server.ts would then encode it again to write it.
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  return withAnswerBytes(
    new Response(bytes, {
      status,
      headers: { "content-type": "application/json; charset=utf-8", ...headers },
    }),
    bytes,
  );
}

export function errorResponse(err: AppError): Response {
  const retryAfter = (err.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  const headers: Record<string, string> = (err.code === "rate_limited" || err.code === "unavailable") && retryAfter ? { "retry-after": String(retryAfter) } : {};
  return json({ error: err.toApi() }, err.status, headers);
}

export function toErrorResponse(err: unknown): Response {
  if (err instanceof AppError) return errorResponse(err);
  if (err instanceof ZodError) return errorResponse(fromZod(err));
  // The edges refuse a NUL (apiRoute, readJson, proxy.ts); one that still reaches
  // the database came in with the request all the same: the caller's input.
  const unstorable = fromUnstorableCharacter(err);
  if (unstorable) {
    logger.warn({ err: (err as Error).message }, "request refused: the database cannot store a character it holds");
    return errorResponse(unstorable);
  }
  // A RangeError that reaches here is the input's doing (a recursion or size
  // limit hit while processing it): the caller's request, not a server fault.
  if (err instanceof RangeError) {
    logger.warn({ err: err.message }, "request refused: RangeError while processing it");
    return errorResponse(new AppError("bad_request", `The request could not be processed (${err.message}); it is too deeply nested or too large.`));
  }
  // The database stopped or restarting is not a fault of this request or of the code: a 503 the caller
  // retries, one line in the log (a stack per request would bury the cause while it lasts).
  if (isDatabaseUnavailable(err)) {
    logger.warn({ err: (err as Error).message.trim().split("\n").at(-1) }, "request refused: the database is not answering");
    return errorResponse(
      new AppError("unavailable", `hookledger cannot reach its database right now (it may be restarting); try again in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`, {
        retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      }),
    );
  }
  // A statement the database stopped at a request's time limit: the request asked for more than it can do in that time.
  if (isStatementTimeout(err)) {
    logger.warn({ err: (err as Error).message }, "request refused: a statement ran past the statement timeout");
    return errorResponse(
      new AppError(
        "unavailable",
        `The database did not finish this request in the time a request has (${REQUEST_STATEMENT_TIMEOUT_MS / 1000} seconds), so it was stopped. Ask for less (one subscription, a shorter time window) or try again when the database is less busy.`,
        { statementTimeoutSeconds: REQUEST_STATEMENT_TIMEOUT_MS / 1000 },
      ),
    );
  }
  logger.error({ err }, "unhandled error in API route");
  return json({ error: { code: "internal", message: "Internal error; the server log has the details.", details: null } }, 500);
}

/**
 * The 401: a page whose session ended (a portal link's expiry or revocation, a sign-out elsewhere) is told so in its
 * viewer's words, with `details.signIn`, the sign-in page's line for it, where lib/client/api.ts sends the browser; a
 * caller with neither a session nor a token, how to get either.
 */
async function unauthorized(req: ApiRequest): Promise<AppError> {
  const ended = await endedSessionOf(req);
  if (ended === "portal")
    return new AppError("unauthorized", "Your district portal session has ended; ask the service that gave the link to you for a new one.", {
      signIn: "/signin?portal=ended",
    });
  if (ended === "user") return new AppError("unauthorized", "Your session has ended; sign in again.", { signIn: "/signin" });
  return new AppError(
    "unauthorized",
    "Missing or invalid credentials: sign in to the dashboard, or send `Authorization: Bearer <token>` (create one with `npx hookledger token create`).",
  );
}

export type ApiRoute = ((req: ApiRequest, ctx?: RouteContext) => Promise<Response>) & { permission: Permission };

/**
 * A route handler that authenticates (bearer token, or the dashboard's session
 * cookie plus the CSRF check on mutations), enforces `permission` from the one
 * table, and maps errors. The permission is attached as `.permission` so the
 * permission-matrix test can find every route's rule.
 */
export function apiRoute(permission: Permission, handler: Handler): ApiRoute {
  const route = withHttpMetrics(async (req: ApiRequest, ctx?: RouteContext): Promise<Response> => {
    try {
      // A NUL in the address is refused before anything else (lib/errors.ts nulInAddress): a malformed request, whoever sends it.
      const params = ctx?.params ? await ctx.params : {};
      const nul = nulInAddress(req.url, params);
      if (nul) throw nul;
      const principal = await principalFromRequest(req);
      if (!principal) throw await unauthorized(req);
      if (principal.mustChangePassword)
        throw new AppError("forbidden", "Choose your own password first (an admin set the current one): open /password in the dashboard.", {
          passwordChangeRequired: true,
        });
      // Both ride on the session cookie: a district portal session is CSRF-checked like a person's.
      if ((principal.kind === "user" || principal.kind === "portal") && !SAFE_METHODS.has(req.method.toUpperCase())) assertCsrf(req, principal.csrf ?? "");
      if (!can(principal.role, permission)) throw new AppError("forbidden", roleRefusal(principal.role, permission), { permission, role: principal.role });
      if (!canAs(principal, permission))
        throw new AppError("forbidden", confinedRefusal(principal.tenantId, permission), {
          permission,
          tenant: principal.tenantId,
        });
      return await handler({ req, principal, params });
    } catch (err) {
      return toErrorResponse(err);
    }
  });
  return Object.assign(route, { permission });
}

/** HOOKLEDGER_MAX_PAYLOAD_BYTES: the largest API body (a malformed value stops the process; lib/env.ts). */
export const MAX_BODY_BYTES = envInt("HOOKLEDGER_MAX_PAYLOAD_BYTES", { default: 256 * 1024, min: 1024, max: 64 * 1024 * 1024 });

const overLimit = (max: number) => new AppError("payload_too_large", `The request body is over ${max} bytes; the limit is ${max}.`);

function assertDeclaredLength(req: ApiRequest, max: number): void {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw new AppError("payload_too_large", `The request body is ${declared} bytes; the limit is ${max}.`);
}

/**
 * Reads a request body as a stream with a running count and stops at `max`
 * (413), so a body without Content-Length (Transfer-Encoding: chunked) is never
 * buffered whole before its size is known. A declared length over the limit is
 * refused before anything is read.
 */
export async function readBodyLimited(req: ApiRequest, max: number): Promise<Buffer> {
  assertDeclaredLength(req, max);
  const read = readBodyOf(req);
  if (read) {
    if (read.length > max) throw overLimit(max);
    return read;
  }
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw overLimit(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Reads a JSON body: 413 over the limit, 415 if not JSON, 400 if malformed,
 * 400 if any string or key holds U+0000 (lib/errors.ts nulInJson), then the schema.
 * `nulCheckedBySchema`: the schema refuses an unstorable string itself, field by
 * field. The events routes: an event's data is stored as bytes (the envelope),
 * where \u0000 is fine and is delivered as sent; its id, type and subject are
 * checked by its schema (lib/events/event-input.ts), and a batch answers each
 * event on its own.
 */
export async function readJson<T>(
  req: ApiRequest,
  schema: ZodType<T>,
  opts: { maxBytes?: number; nulCheckedBySchema?: boolean; empty?: T } = {},
): Promise<{ value: T; raw: string }> {
  const max = opts.maxBytes ?? MAX_BODY_BYTES;
  assertDeclaredLength(req, max);
  const type = req.headers.get("content-type") ?? "";
  if (type && !/^application\/(.+\+)?json\b/i.test(type)) throw new AppError("unsupported_media_type", `Send the body as application/json (got ${type}).`);
  const buf = await readBodyLimited(req, max);
  const raw = buf.toString("utf8");
  // An empty body is known only once read: `curl -X POST` sends neither Content-Length nor a body, and
  // Next hands the route an empty stream for it, not a null body.
  if (opts.empty !== undefined && raw.trim() === "") return { value: opts.empty, raw };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new AppError("invalid_json", `The body is not valid JSON: ${(err as Error).message}`);
  }
  // JSON carries a NUL only escaped (JSON.parse refuses a raw one), so a body without "\u0000" is not walked.
  if (!opts.nulCheckedBySchema && raw.includes("\\u0000")) {
    const nul = nulInJson(parsed);
    if (nul) throw nul;
  }
  const r = schema.safeParse(parsed);
  if (!r.success) throw fromZod(r.error);
  return { value: r.data, raw };
}

export function parseQuery<T>(req: ApiRequest, schema: ZodType<T>): T {
  const url = new URL(req.url);
  const obj: Record<string, string> = {};
  url.searchParams.forEach((v, k) => (obj[k] = v));
  const r = schema.safeParse(obj);
  if (!r.success) throw fromZod(r.error, "query");
  return r.data;
}
