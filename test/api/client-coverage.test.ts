// The typed client (@hookledger/client, client/src) covers the API: generated
// from the route files, so a new /api/v1 route (or a new method on one) fails
// here until the client can call it. The dashboard's own read model
// (/api/v1/dashboard/*) and the OpenAPI document are not producer or operator calls.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { routePath, v1RouteFiles } from "../helpers/client-server";
import { openApiDocument } from "../../lib/api/openapi";

const NOT_IN_CLIENT = [/^\/api\/v1\/dashboard\//, /^\/api\/v1\/openapi\.json$/];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

const CLIENT_SOURCE = "client/src/index.ts";

/** "POST /subscriptions/{}/archive" for every call the client makes (each names its route as the OpenAPI document does). */
function clientCalls(): Set<string> {
  const src = fs.readFileSync(CLIENT_SOURCE, "utf8");
  const out = new Set<string>();
  for (const m of src.matchAll(/this\.(?:op|send)\(\s*"(get|post|put|patch|delete)",\s*"\/api\/v1([^"]+)"/g))
    out.add(`${m[1].toUpperCase()} ${m[2].replace(/\{[^}]+\}/g, "{}")}`);
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

  it("declares each method's answer as the answer of the operation it calls", () => {
    // The declared type is what a caller sees; the compiler checks the call against it, but two operations
    // that both answer "an object" would pass for each other, so the names are compared here.
    const doc = openApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const src = fs.readFileSync(CLIENT_SOURCE, "utf8");
    // Promise<Answer<"id">>, Answer<"id", 201> (one of its statuses) or Extract<Answer<"id">, …> (one of its shapes).
    const declared = [...src.matchAll(/Promise<(?:Extract<)?Answer<"(\w+)"(?:, \d+)?>[^=]*?>\s*=>\s*this\.op\(\s*"(\w+)",\s*"([^"]+)"/g)];
    expect(declared.length).toBeGreaterThan(30);
    const wrong = declared.filter(([, id, method, route]) => doc.paths[route]?.[method]?.operationId !== id).map(([, id, method, route]) => `${id}: ${method} ${route}`);
    expect(wrong).toEqual([]);
  });
});
