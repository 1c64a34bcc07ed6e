import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { routePath, v1RouteFiles } from "../helpers/client-server";
import { API_OPERATIONS } from "../../lib/api/openapi";
import * as openapiRoute from "../../app/api/v1/openapi.json/route";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import * as delivery from "../../app/api/v1/deliveries/[id]/route";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

let db: TestDb;
let doc: any;
beforeAll(async () => {
  db = await createTestDatabase();
  const r = await call(openapiRoute.GET as never);
  expect(r.status, r.text).toBe(200);
  doc = r.json;
});
afterAll(async () => db?.close());

describe("GET /api/v1/openapi.json", () => {
  it("answers without a token and is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const v = new Validator();
    const res = await v.validate(doc);
    expect(res.errors ?? [], JSON.stringify(res.errors, null, 1)).toEqual([]);
    expect(res.valid).toBe(true);
    expect(v.version).toBe("3.1");
  });

  it("every route file and exported method has an entry with the route's permission, and every entry a route file", async () => {
    const fromFiles: string[] = [];
    const mismatched: string[] = [];
    for (const file of v1RouteFiles()) {
      const mod = (await import(/* @vite-ignore */ path.resolve(file))) as Record<string, ((...args: unknown[]) => unknown) & { permission?: string }>;
      for (const m of METHODS) {
        if (typeof mod[m] !== "function") continue;
        const key = `${m.toLowerCase()} ${routePath(file)}`;
        fromFiles.push(key);
        const op = API_OPERATIONS.find((o) => `${o.method} ${o.path}` === key);
        if (op && op.permission !== (mod[m].permission ?? null)) mismatched.push(`${key}: ${op.permission} vs ${mod[m].permission}`);
      }
    }
    const fromRegistry = API_OPERATIONS.map((o) => `${o.method} ${o.path}`);
    expect(
      fromFiles.filter((k) => !fromRegistry.includes(k)),
      "routes missing from lib/api/openapi.ts",
    ).toEqual([]);
    expect(
      fromRegistry.filter((k) => !fromFiles.includes(k)),
      "entries in lib/api/openapi.ts without a route file",
    ).toEqual([]);
    expect(new Set(fromRegistry).size).toBe(fromRegistry.length);
    expect(mismatched).toEqual([]);
    for (const k of fromRegistry) {
      const [method, p] = k.split(" ");
      expect(doc.paths[p]?.[method], k).toBeTruthy();
    }
  });

  it("request bodies come from the routes' zod schemas, and errors share one shape", () => {
    const publish = doc.paths["/api/v1/events"].post;
    const body = publish.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(expect.arrayContaining(["id", "type", "data"]));
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.id.pattern).toBeTruthy();
    const batch = doc.paths["/api/v1/events/batch"].post.requestBody.content["application/json"].schema;
    expect(batch.properties.events).toMatchObject({ type: "array", minItems: 1, maxItems: 500 });
    expect(publish.responses["400"].$ref).toBe("#/components/responses/E400");
    expect(doc.components.schemas.Error.properties.error.required).toEqual(expect.arrayContaining(["code", "message"]));
    expect(doc.paths["/api/v1/openapi.json"].get.security).toEqual([]);
    const q = doc.paths["/api/v1/deliveries"].get.parameters.map((p: { name: string }) => p.name);
    expect(q).toEqual(expect.arrayContaining(["subscriptionId", "state", "limit"]));
  });
});

describe("response schemas", () => {
  // Parsing drops fields a schema does not name, so "parsed equals the answer"
  // fails both for a field the document lacks and for one it wrongly requires.
  const answered = (path: string, method: string) => API_OPERATIONS.find((o) => o.path === path && o.method === method)!.response!;

  it("a subscription's and a delivery's answers are exactly what the document describes", async () => {
    const admin = await tokenFor(db.prisma, "admin");
    const created = await call(subscriptions.POST, {
      token: admin,
      body: {
        id: "sub_doc",
        name: "Lincoln SIS",
        tenant: "lincoln",
        url: "https://sis.lincoln.example/hooks",
        eventTypes: ["assignment.graded"],
        headers: { Authorization: "Bearer s3cret-token" },
        failurePolicy: { windowSeconds: 600, minAttempts: 5, probeIntervalSeconds: 30 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(answered("/api/v1/subscriptions", "post").parse(created.json)).toEqual(created.json);
    const paused = await call(subscription.PATCH, { token: admin, params: { id: "sub_doc" }, body: { state: "paused", reason: "district maintenance" } });
    expect(paused.status, paused.text).toBe(200);
    expect(answered("/api/v1/subscriptions/{id}", "patch").parse(paused.json)).toEqual(paused.json);
    const one = await call(subscription.GET, { token: admin, params: { id: "sub_doc" } });
    expect(answered("/api/v1/subscriptions/{id}", "get").parse(one.json)).toEqual(one.json);
    const list = await call(subscriptions.GET, { token: admin });
    expect(list.json.items.length).toBeGreaterThan(0);
    expect(answered("/api/v1/subscriptions", "get").parse(list.json)).toEqual(list.json);

    // A dead letter with its attempt, as the worker would leave it.
    await seedEvent(db.pool, { id: "evt_doc", subject: { tenant: "lincoln", studentId: "stu_1" } });
    const id = await seedDelivery(db.pool, {
      subscriptionId: "sub_doc",
      eventId: "evt_doc",
      state: "dead_letter",
      reason: "permanent",
      attempts: [{ at: new Date(Date.now() - 60_000), status: 422, errorClass: "http_4xx", outcome: "dead_letter" }],
    });
    const page = await call(deliveries.GET, { token: admin, path: "/api/v1/deliveries?subscriptionId=sub_doc" });
    expect(page.json.items).toHaveLength(1);
    expect(answered("/api/v1/deliveries", "get").parse(page.json)).toEqual(page.json);
    const detail = await call(delivery.GET, { token: admin, params: { id } });
    expect(detail.json.attempts).toHaveLength(1);
    expect(answered("/api/v1/deliveries/{id}", "get").parse(detail.json)).toEqual(detail.json);
  });
});
