// HTTP API request metrics: a wrapped route counts each request once, by
// method, route pattern (ids folded into ":id") and status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as metrics from "../../app/metrics/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import { routeLabel, withHttpMetrics } from "../../lib/metrics/http";
import { parseProm, sample } from "../helpers/prom";

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
const withEnv = async (env: Record<string, string | undefined>, fn: () => Promise<void>) => {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
};
afterAll(async () => db?.close());

describe("who may read /metrics", () => {
  it("no token configured: refused (401, saying what to set) unless on loopback or opted out with HOOKLEDGER_METRICS_PUBLIC=1", async () => {
    await withEnv({ HOOKLEDGER_METRICS_TOKEN: undefined, HOOKLEDGER_METRICS_PUBLIC: undefined, HOOKLEDGER_HOST: undefined }, async () => {
      const r = await call(metrics.GET, { path: "/metrics" });
      expect(r.status).toBe(401);
      expect(r.text).toMatch(/HOOKLEDGER_METRICS_TOKEN/);
      expect(r.text).toMatch(/HOOKLEDGER_METRICS_PUBLIC=1/);
      expect(r.text).not.toMatch(/sub_|hookledger_/);
    });
    await withEnv({ HOOKLEDGER_METRICS_TOKEN: undefined, HOOKLEDGER_METRICS_PUBLIC: "1" }, async () => {
      expect((await call(metrics.GET, { path: "/metrics" })).status).toBe(200);
    });
    await withEnv({ HOOKLEDGER_METRICS_TOKEN: undefined, HOOKLEDGER_METRICS_PUBLIC: undefined, HOOKLEDGER_HOST: "127.0.0.1" }, async () => {
      expect((await call(metrics.GET, { path: "/metrics" })).status).toBe(200);
    });
  });

  it("a configured token is required even where metrics would otherwise be open", async () => {
    await withEnv({ HOOKLEDGER_METRICS_TOKEN: "scrape-token", HOOKLEDGER_METRICS_PUBLIC: "1" }, async () => {
      expect((await call(metrics.GET, { path: "/metrics" })).status).toBe(401);
      expect((await call(metrics.GET, { path: "/metrics", token: "wrong" })).status).toBe(401);
      expect((await call(metrics.GET, { path: "/metrics", token: "scrape-token" })).status).toBe(200);
    });
  });
});

describe("HTTP API metrics", () => {
  it("route labels fold ids", () => {
    expect(routeLabel("/api/v1/deliveries")).toBe("/api/v1/deliveries");
    expect(routeLabel("/api/v1/deliveries/dlv_0195d2c4a1b2c3d4e5f6a7b8c9")).toBe("/api/v1/deliveries/:id");
    expect(routeLabel("/api/v1/deliveries/dlv_0195d2c4a1b2c3d4e5f6a7b8c9/redrive")).toBe("/api/v1/deliveries/:id/redrive");
    expect(routeLabel("/api/v1/subscriptions/lincoln-usd")).toBe("/api/v1/subscriptions/:id");
    expect(routeLabel("/api/v1/redrives/rdb_0195d2c4a1b2c3d4e5f6")).toBe("/api/v1/redrives/:id");
  });

  it("counts requests by method, route and status, and /metrics shows them", async () => {
    // apiRoute wraps every /api/v1 handler with withHttpMetrics already.
    const get = sub.GET;
    const support = await tokenFor(db.prisma, "support");
    await call(get, { path: "/api/v1/subscriptions/sub_nope_1", token: support, params: { id: "sub_nope_1" } });
    await call(get, { path: "/api/v1/subscriptions/sub_nope_2", token: support, params: { id: "sub_nope_2" } });
    await call(get, { path: "/api/v1/subscriptions/sub_x", params: { id: "sub_x" } });
    const throws = withHttpMetrics(async () => {
      throw new Error("boom");
    }, "/api/v1/boom");
    await expect(throws(new Request("http://localhost/api/v1/boom", { method: "POST" }))).rejects.toThrow("boom");

    process.env.HOOKLEDGER_METRICS_PUBLIC = "1";
    const s = parseProm((await call(metrics.GET, { path: "/metrics" })).text);
    delete process.env.HOOKLEDGER_METRICS_PUBLIC;
    expect(sample(s, "hookledger_http_requests_total", { method: "GET", route: "/api/v1/subscriptions/:id", status: "404" })).toBe(2);
    expect(sample(s, "hookledger_http_requests_total", { method: "GET", route: "/api/v1/subscriptions/:id", status: "401" })).toBe(1);
    expect(sample(s, "hookledger_http_requests_total", { method: "POST", route: "/api/v1/boom", status: "500" })).toBe(1);
    expect(sample(s, "hookledger_http_request_duration_seconds_count", { method: "GET", route: "/api/v1/subscriptions/:id" })).toBe(3);
  });
});
