// node:http ⇄ web Request/Response for the routes server.ts serves itself
// (POST /api/v1/events and /api/v1/events/batch) before Next's request
// handler would: the same route handler functions, called with the method, URL
// and headers Next's Request would carry, and answered with the headers next.config.ts
// gives those paths. Next's own pipeline cost ~2 ms of CPU per request (web
// streams, router, tracing): a third of the route's throughput (BENCHMARKS.md F5b).
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { answerBytesOf, withReadBody, type ApiRequest } from "../api/bodies";

/** One entry of next.config.ts's `headers()`: only the forms the config uses (a literal prefix then `/:path*`, `has` on a header). */
export type HeaderRule = {
  source: string;
  has?: { type: string; key?: string; value?: string }[];
  missing?: unknown[];
  headers: { key: string; value: string }[];
};

function sourceMatches(source: string, pathname: string): boolean {
  if (source.endsWith("/:path*")) {
    const prefix = source.slice(0, -"/:path*".length);
    return pathname === prefix || pathname.startsWith(`${prefix}/`) || (prefix === "" && pathname.startsWith("/"));
  }
  if (/[:(*]/.test(source)) throw new Error(`next.config.ts headers(): source ${source} is not a form server.ts can match; extend lib/server/http.ts`);
  return source === pathname;
}

/** Next's `has` for a header: present, and when a value is given, the whole (last) value matches it as a regular expression. */
function hasMatches(has: NonNullable<HeaderRule["has"]>, headers: IncomingMessage["headers"]): boolean {
  return has.every((h) => {
    if (h.type !== "header" || !h.key) throw new Error(`next.config.ts headers(): has.type ${h.type} is not supported by lib/server/http.ts`);
    const raw = headers[h.key.toLowerCase()];
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (!value) return false;
    return h.value === undefined || new RegExp(`^${h.value}$`).test(value);
  });
}

/**
 * The headers next.config.ts's rules give `pathname` for this request, in
 * rule order (a later rule's value for the same key wins, as in Next).
 * Throws on a rule form it cannot evaluate, so a config change cannot silently
 * drop a header from these paths (test/process/server.test.ts compares with Next).
 */
function configHeaders(rules: HeaderRule[], pathname: string, headers: IncomingMessage["headers"]): [string, string][] {
  const out = new Map<string, [string, string]>();
  for (const rule of rules) {
    if (rule.missing?.length) throw new Error("next.config.ts headers(): `missing` is not supported by lib/server/http.ts");
    if (!sourceMatches(rule.source, pathname)) continue;
    if (rule.has && !hasMatches(rule.has, headers)) continue;
    for (const h of rule.headers) out.set(h.key.toLowerCase(), [h.key, h.value]);
  }
  return [...out.values()];
}

type BodyRead = { body: Buffer };

/**
 * Reads a request body, keeping at most `max + 1` bytes: enough for the route
 * handler's own limit check (lib/api/handler.ts readBodyLimited) to answer 413
 * with its usual message, without buffering an oversized upload. A declared
 * length over `max` is not read at all (the handler refuses it from the header).
 */
function readBody(req: IncomingMessage, max: number): Promise<BodyRead> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) {
    req.resume();
    return Promise.resolve({ body: Buffer.alloc(0) });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (c: Buffer) => {
      const room = max + 1 - total;
      if (c.length >= room) {
        chunks.push(room === c.length ? c : c.subarray(0, room));
        total += room;
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onError);
        // The rest is read and dropped (memory stays bounded): closing the connection instead
        // could reset it before the client has read the 413.
        req.resume();
        resolve({ body: Buffer.concat(chunks, total) });
        return;
      }
      chunks.push(c);
      total += c.length;
    };
    const onEnd = () => resolve({ body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total) });
    const onError = (err: Error) => reject(err);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/**
 * What a route handler reads of the Request Next would give it: the method,
 * the URL Next builds (its protocol from x-forwarded-proto, the server's
 * hostname and port, the raw path and query), the request's headers, and the
 * body read so far (attached for readBodyLimited, lib/api/bodies.ts: route
 * handlers read it through that). A plain object, not undici's Request, which
 * costs an AbortController and more each (lib/api/bodies.ts, ApiRequest).
 */
export function toApiRequest(req: IncomingMessage, body: Buffer, server: { hostname: string; port: number }): ApiRequest {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else headers.set(k, v);
  }
  const protocol = req.headers["x-forwarded-proto"]?.includes("https") ? "https" : "http";
  const host = server.hostname.includes(":") ? `[${server.hostname}]` : server.hostname;
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD" && body.length > 0;
  // The body travels beside the request (lib/api/bodies.ts), not as a stream inside it.
  const api: ApiRequest = { method, url: new URL(`${protocol}://${host}:${server.port}${req.url ?? "/"}`).href, headers, body: null };
  return hasBody ? withReadBody(api, body) : api;
}

/**
 * Writes a route handler's Response with the config's headers first (the
 * handler's own headers win on a clash, as in Next).
 */
async function sendResponse(res: ServerResponse, response: Response, extra: [string, string][], vary?: string): Promise<void> {
  const body = answerBytesOf(response) ?? Buffer.from(await response.arrayBuffer());
  res.statusCode = response.status;
  for (const [k, v] of extra) res.setHeader(k, v);
  if (vary) res.appendHeader("vary", vary);
  response.headers.forEach((v, k) => {
    if (k !== "set-cookie") res.setHeader(k, v);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader("set-cookie", cookies);
  res.setHeader("content-length", body.length);
  res.end(body);
}

export type FastRoute = { handler: (req: ApiRequest) => Promise<Response>; maxBytes: number };
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * The server: POST to a path in `routes` is answered by its handler here;
 * every other request (other paths, other methods) goes to `fallback`, Next's
 * request handler. `onError` hears of a failure outside the handler (a broken
 * connection); the handlers answer their own errors.
 */
export function createHookledgerServer(opts: {
  routes: Map<string, FastRoute>;
  rules: HeaderRule[];
  fallback: NodeHandler;
  urlHost: { hostname: string; port: number };
  /** The Vary Next gives an app route's answer (its router's request headers). */
  vary?: string;
  /** Runs before the answer is written: Next's compression middleware, as Next applies it to every answer. */
  compress?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  onError: (err: unknown) => void;
}): http.Server {
  return http.createServer((req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    const route = req.method === "POST" ? opts.routes.get(pathname) : undefined;
    if (!route) {
      void opts.fallback(req, res);
      return;
    }
    void (async () => {
      try {
        const { body } = await readBody(req, route.maxBytes);
        const response = await route.handler(toApiRequest(req, body, opts.urlHost));
        opts.compress?.(req, res, () => {});
        await sendResponse(res, response, configHeaders(opts.rules, pathname, req.headers), opts.vary);
      } catch (err) {
        opts.onError(err);
        if (!res.headersSent) {
          res.statusCode = 500;
          res.setHeader("content-type", "application/json; charset=utf-8");
          res.end(JSON.stringify({ error: { code: "internal", message: "Internal error; the server log has the details.", details: null } }));
        } else res.destroy();
      }
    })();
  });
}
