// The typed client covers the API: generated from the route files, so a new
// /api/v1 route (or a new method on one) fails here until the client can call
// it. The dashboard's own read model (/api/v1/dashboard/*) and the OpenAPI
// document are not producer or operator calls.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { routePath, v1RouteFiles } from "./client-server";

const NOT_IN_CLIENT = [/^\/api\/v1\/dashboard\//, /^\/api\/v1\/openapi\.json$/];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** "POST /subscriptions/{}/archive" for every call the client makes. */
function clientCalls(): Set<string> {
  const src = fs.readFileSync("lib/client/hookledger.ts", "utf8");
  const out = new Set<string>();
  for (const m of src.matchAll(/this\.call<[\s\S]*?>\(\s*"(GET|POST|PUT|PATCH|DELETE)",\s*[`"]([^`"]+)[`"]/g)) out.add(`${m[1]} ${m[2].replace(/\$\{[^}]+\}/g, "{}")}`);
  // publishBatch calls without a type argument; publish goes through request() to read the status.
  for (const m of src.matchAll(/this\.(?:call|request<[\s\S]*?>)\(\s*"(GET|POST|PUT|PATCH|DELETE)",\s*[`"]([^`"]+)[`"]/g))
    out.add(`${m[1]} ${m[2].replace(/\$\{[^}]+\}/g, "{}")}`);
  return out;
}

describe("the typed client", () => {
  it("has a method for every method of every /api/v1 route", () => {
    const calls = clientCalls();
    expect(calls.size).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const file of v1RouteFiles()) {
      const p = routePath(file);
      if (NOT_IN_CLIENT.some((re) => re.test(p))) continue;
      const src = fs.readFileSync(file, "utf8");
      for (const method of METHODS) {
        if (!new RegExp(`export const ${method}\\b`).test(src)) continue;
        const key = `${method} ${p.replace(/^\/api\/v1/, "").replace(/\{[^}]+\}/g, "{}")}`;
        if (!calls.has(key)) missing.push(key);
      }
    }
    expect(missing).toEqual([]);
  });
});
