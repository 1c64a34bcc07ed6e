// HTTP API request metrics. `withHttpMetrics` wraps a route handler; apiRoute
// (lib/api/handler.ts) wraps every /api/v1 route with it, so each request is
// counted once with its route pattern (ids replaced by ":id" so the label set
// stays bounded).
import { dashboardMetrics } from "./dashboard";

type RouteFn<C> = (req: Request, ctx?: C) => Promise<Response>;

// A path segment that names one thing rather than a collection: whatever follows
// a collection name (client-chosen subscription ids included), and anything
// shaped like an id (prefix_…, numbers, UUIDs).
const COLLECTIONS = new Set(["subscriptions", "deliveries", "events", "redrives", "tokens", "users"]);
const ID_LIKE = /^(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]+_[A-Za-z0-9]{8,})$/i;

/** "/api/v1/deliveries/dlv_…/redrive" → "/api/v1/deliveries/:id/redrive". */
export function routeLabel(pathname: string): string {
  const parts = pathname.split("/");
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i];
    out.push(seg && (ID_LIKE.test(seg) || (i > 0 && COLLECTIONS.has(parts[i - 1]))) ? ":id" : seg);
  }
  return out.join("/") || "/";
}

export function observeHttpRequest(method: string, route: string, status: number, seconds: number) {
  const m = dashboardMetrics();
  m.httpRequests.inc({ method, route, status: String(status) });
  m.httpDuration.observe({ method, route }, seconds);
}

/** Wraps a route handler so every answer (and every throw, as a 500) is counted. */
export function withHttpMetrics<C>(fn: RouteFn<C>, route?: string): RouteFn<C> {
  return async (req: Request, ctx?: C) => {
    const t0 = performance.now();
    const label = route ?? routeLabel(new URL(req.url).pathname);
    let status = 500;
    try {
      const res = await fn(req, ctx);
      status = res.status;
      return res;
    } finally {
      observeHttpRequest(req.method.toUpperCase(), label, status, (performance.now() - t0) / 1000);
    }
  };
}
