// HTTP API request metrics. `withHttpMetrics` wraps a route handler; apiRoute
// (lib/api/handler.ts) wraps every /api/v1 route with it, so each request is
// counted once with its route pattern.
//
// The wrapper runs before authentication, so the label must never come from
// the caller's text: a label per distinct path would let anyone without a
// token grow the series set (and this process's memory, and every /metrics
// scrape) one random id at a time. The label is therefore the route pattern
// the path matches, taken from the one registry of /api/v1 routes
// (lib/api/openapi.ts, which test/api/openapi.test.ts holds equal to the route
// files), or one fixed label for anything that matches none.
import "server-only";
import { dashboardMetrics } from "./dashboard";
import { API_OPERATIONS } from "../api/openapi";

type RouteFn<R, C> = (req: R, ctx?: C) => Promise<Response>;

/** The label of a path that matches no /api/v1 route. */
export const UNMATCHED_ROUTE = "/api/v1/:unmatched";
/** Methods counted by name; anything else (a handler called with an odd method) is "OTHER". */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

type Pattern = { label: string; segments: (string | null)[] };

let patterns: Pattern[] | undefined;
/** "/api/v1/subscriptions/{id}/secrets/{secretId}" → label "/api/v1/subscriptions/:id/secrets/:secretId". */
function routePatterns(): Pattern[] {
  if (patterns) return patterns;
  const seen = new Set<string>();
  const out: Pattern[] = [];
  for (const op of API_OPERATIONS) {
    if (seen.has(op.path)) continue;
    seen.add(op.path);
    const parts = op.path.split("/");
    out.push({
      label: parts.map((p) => p.replace(/^\{(\w+)\}$/, ":$1")).join("/"),
      segments: parts.map((p) => (/^\{\w+\}$/.test(p) ? null : p)),
    });
  }
  // A static segment wins over a dynamic one at the same place, as in Next's
  // router ("/api/v1/events/batch" before a would-be "/api/v1/events/{id}").
  const rank = (p: Pattern) => p.segments.map((s) => (s === null ? "1" : "0")).join("");
  patterns = out.sort((a, b) => rank(a).localeCompare(rank(b)));
  return patterns;
}

/** "/api/v1/deliveries/dlv_…/redrive" → "/api/v1/deliveries/:id/redrive"; a path no route has → UNMATCHED_ROUTE. */
export function routeLabel(pathname: string): string {
  const parts = pathname.replace(/\/+$/, "").split("/");
  for (const p of routePatterns()) {
    if (p.segments.length !== parts.length) continue;
    if (p.segments.every((s, i) => (s === null ? parts[i] !== "" : s === parts[i]))) return p.label;
  }
  return UNMATCHED_ROUTE;
}

function observeHttpRequest(method: string, route: string, status: number, seconds: number) {
  const m = dashboardMetrics();
  m.httpRequests.inc({ method, route, status: String(status) });
  m.httpDuration.observe({ method, route }, seconds);
}

/** Wraps a route handler so every answer (and every throw, as a 500) is counted. */
export function withHttpMetrics<R extends Pick<Request, "method" | "url">, C>(fn: RouteFn<R, C>, route?: string): RouteFn<R, C> {
  return async (req: R, ctx?: C) => {
    const t0 = performance.now();
    const label = route ?? routeLabel(new URL(req.url).pathname);
    const method = req.method.toUpperCase();
    let status = 500;
    try {
      const res = await fn(req, ctx);
      status = res.status;
      return res;
    } finally {
      observeHttpRequest(METHODS.has(method) ? method : "OTHER", label, status, (performance.now() - t0) / 1000);
    }
  };
}
