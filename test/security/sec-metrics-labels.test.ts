// The HTTP metrics wrapper runs before authentication, so a caller without a
// token chooses the path. Generated from the route files under app/api/v1: for
// every route with a dynamic segment, unauthenticated requests with many
// different random ids must add one route label (the route's pattern), and a
// path no route has must map to one fixed label, so no caller can grow the
// series set (memory, /metrics size) one random id at a time.
import crypto from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { v1RouteFiles } from "../helpers/client-server";
import { dashboardMetrics } from "../../lib/metrics/dashboard";
import { UNMATCHED_ROUTE, routeLabel, withHttpMetrics } from "../../lib/metrics/http";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const IDS_PER_ROUTE = 25;

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
afterAll(async () => db?.close());

async function routeLabels(): Promise<Set<string>> {
  const got = await dashboardMetrics().httpRequests.get();
  return new Set(got.values.map((v) => String(v.labels.route)));
}

/** Random ids of the kinds a caller can send: plain, id-shaped, odd characters, long. */
function randomIds(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = crypto.randomBytes(9).toString("base64url");
    out.push([r, `sec_${r}`, `x-${r}-y`, encodeURIComponent(`é ${r}`), r.repeat(20)][i % 5]);
  }
  return out;
}

describe("HTTP metrics route labels are bounded whatever the path", () => {
  it("every dynamic /api/v1 route: many random ids, unauthenticated (401) → one label, the route's pattern", async () => {
    const files = v1RouteFiles().filter((f) => f.includes("["));
    expect(files.length).toBeGreaterThan(5);
    const before = await routeLabels();
    const patterns = new Set<string>();
    for (const file of files) {
      const rel = path.dirname(path.relative("app", file)).split(path.sep).join("/");
      const pattern = "/" + rel.replace(/\[(\w+)\]/g, ":$1");
      patterns.add(pattern);
      const mod = (await import(/* @vite-ignore */ path.resolve(file))) as Record<string, any>;
      const methods = METHODS.filter((m) => typeof mod[m] === "function");
      expect(methods.length, file).toBeGreaterThan(0);
      for (const method of methods) {
        for (const id of randomIds(IDS_PER_ROUTE)) {
          const params: Record<string, string> = {};
          const urlPath = "/" + rel.replace(/\[(\w+)\]/g, (_, name: string) => ((params[name] = `${id}`), params[name]));
          const r = await call(mod[method], { method, path: urlPath, params, body: method === "GET" ? undefined : {} });
          expect(r.status, `${method} ${urlPath}`).toBe(401);
        }
      }
    }
    const added = [...(await routeLabels())].filter((l) => !before.has(l));
    // Each dynamic route file adds at most its own pattern, and nothing else.
    expect(added.filter((l) => !patterns.has(l))).toEqual([]);
    expect(added.length).toBeLessThanOrEqual(patterns.size);
    for (const p of patterns) expect(routeLabel(p.replace(/:\w+/g, "anything-at-all"))).toBe(p);
  });

  it("a path under /api/v1 that no route has maps to one fixed label", async () => {
    const wrapped = withHttpMetrics(async () => new Response(null, { status: 404 }));
    for (const id of randomIds(40)) {
      for (const p of [`/api/v1/${id}`, `/api/v1/subscriptions/x/secrets/y/${id}`, `/api/v1/nope/${id}/deeper`, `/api/v1/events/${id}`]) {
        expect(routeLabel(p)).toBe(UNMATCHED_ROUTE);
        await wrapped(new Request(`http://localhost${p}`));
      }
    }
    const labels = [...(await routeLabels())];
    expect(labels.filter((l) => l !== UNMATCHED_ROUTE && !l.includes(":") && !/^\/api\/v1(\/[a-z.-]+)+$/.test(l))).toEqual([]);
    expect(labels).toContain(UNMATCHED_ROUTE);
    // Static routes keep their own label; a trailing slash is the same route.
    expect(routeLabel("/api/v1/events/batch")).toBe("/api/v1/events/batch");
    expect(routeLabel("/api/v1/events/")).toBe("/api/v1/events");
    expect(routeLabel("/api/v1/subscriptions/lincoln-usd/secrets/sec_9")).toBe("/api/v1/subscriptions/:id/secrets/:secretId");
  });
});
