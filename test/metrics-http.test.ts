// HTTP API request metrics: a wrapped route counts each request once, by
// method, route pattern (ids folded into ":id") and status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "./db";
import { call, tokenFor } from "./api";
import * as metrics from "../app/metrics/route";
import * as sub from "../app/api/v1/subscriptions/[id]/route";
import { routeLabel, withHttpMetrics } from "../lib/metrics/http";
import { parseProm, sample } from "./prom";

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
afterAll(async () => db?.close());

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

    const s = parseProm((await call(metrics.GET, { path: "/metrics" })).text);
    expect(sample(s, "hookledger_http_requests_total", { method: "GET", route: "/api/v1/subscriptions/:id", status: "404" })).toBe(2);
    expect(sample(s, "hookledger_http_requests_total", { method: "GET", route: "/api/v1/subscriptions/:id", status: "401" })).toBe(1);
    expect(sample(s, "hookledger_http_requests_total", { method: "POST", route: "/api/v1/boom", status: "500" })).toBe(1);
    expect(sample(s, "hookledger_http_request_duration_seconds_count", { method: "GET", route: "/api/v1/subscriptions/:id" })).toBe(3);
  });
});
