// Every /api/v1 route goes through `apiRoute`: authentication, the permission
// table, and the one mapping from errors to HTTP answers (STYLE.md #5).
import { ZodError, type ZodType } from "zod";
import { AppError, fromZod } from "../errors";
import { can, type Permission } from "../auth/permissions";
import { principalFromRequest, type Principal } from "../auth/principal";
import { SAFE_METHODS, assertCsrf } from "../auth/csrf";
import { logger } from "../log";
import { withHttpMetrics } from "../metrics/http";

export type RouteContext = { params: Promise<Record<string, string>> };
export type Handler = (args: { req: Request; principal: Principal; params: Record<string, string> }) => Promise<Response>;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(err: AppError): Response {
  const retryAfter = (err.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  const headers: Record<string, string> = err.code === "rate_limited" && retryAfter ? { "retry-after": String(retryAfter) } : {};
  return json({ error: { code: err.code, message: err.message, details: err.details ?? null } }, err.status, headers);
}

export function toErrorResponse(err: unknown): Response {
  if (err instanceof AppError) return errorResponse(err);
  if (err instanceof ZodError) return errorResponse(fromZod(err));
  logger.error({ err }, "unhandled error in API route");
  return json({ error: { code: "internal", message: "Internal error; the server log has the details.", details: null } }, 500);
}

export type ApiRoute = ((req: Request, ctx?: RouteContext) => Promise<Response>) & { permission: Permission };

/**
 * A route handler that authenticates (bearer token, or the dashboard's session
 * cookie plus the CSRF check on mutations), enforces `permission` from the one
 * table, and maps errors. The permission is attached as `.permission` so the
 * permission-matrix test can find every route's rule.
 */
export function apiRoute(permission: Permission, handler: Handler): ApiRoute {
  const route = withHttpMetrics(async (req: Request, ctx?: RouteContext): Promise<Response> => {
    try {
      const principal = await principalFromRequest(req);
      if (!principal)
        throw new AppError("unauthorized", "Missing or invalid credentials: sign in to the dashboard, or send `Authorization: Bearer <token>` (create one with `npx hookledger token create`).");
      if (principal.kind === "user" && !SAFE_METHODS.has(req.method.toUpperCase())) assertCsrf(req, principal.csrf ?? "");
      if (!can(principal.role, permission))
        throw new AppError("forbidden", `The ${principal.role} role may not ${permission}.`, { permission, role: principal.role });
      const params = ctx?.params ? await ctx.params : {};
      return await handler({ req, principal, params });
    } catch (err) {
      return toErrorResponse(err);
    }
  });
  return Object.assign(route, { permission });
}

export const MAX_BODY_BYTES = Number(process.env.HOOKLEDGER_MAX_PAYLOAD_BYTES ?? 256 * 1024);

/** Reads a JSON body: 413 over the limit, 415 if not JSON, 400 if malformed, then the schema. */
export async function readJson<T>(req: Request, schema: ZodType<T>, opts: { maxBytes?: number } = {}): Promise<{ value: T; raw: string }> {
  const max = opts.maxBytes ?? MAX_BODY_BYTES;
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > max) throw new AppError("payload_too_large", `The request body is ${declared} bytes; the limit is ${max}.`);
  const type = req.headers.get("content-type") ?? "";
  if (type && !/^application\/(.+\+)?json\b/i.test(type))
    throw new AppError("unsupported_media_type", `Send the body as application/json (got ${type}).`);
  const buf = Buffer.from(await req.arrayBuffer());
  if (buf.byteLength > max) throw new AppError("payload_too_large", `The request body is ${buf.byteLength} bytes; the limit is ${max}.`);
  const raw = buf.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new AppError("invalid_json", `The body is not valid JSON: ${(err as Error).message}`);
  }
  const r = schema.safeParse(parsed);
  if (!r.success) throw fromZod(r.error);
  return { value: r.data, raw };
}

export function parseQuery<T>(req: Request, schema: ZodType<T>): T {
  const url = new URL(req.url);
  const obj: Record<string, string> = {};
  url.searchParams.forEach((v, k) => (obj[k] = v));
  const r = schema.safeParse(obj);
  if (!r.success) throw fromZod(r.error, "query");
  return r.data;
}
