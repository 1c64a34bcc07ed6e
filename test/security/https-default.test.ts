// https by default: an http:// subscription URL is a 400 that says why,
// unless HOOKLEDGER_ALLOW_HTTP_TARGETS=1 or HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1
// (what the tests and the demo set); the refusal writes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { writeCounts } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";

let db: TestDb;
let manager: string;
const saved = { http: process.env.HOOKLEDGER_ALLOW_HTTP_TARGETS, priv: process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS };

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
});
afterEach(() => {
  for (const [k, v] of [
    ["HOOKLEDGER_ALLOW_HTTP_TARGETS", saved.http],
    ["HOOKLEDGER_ALLOW_PRIVATE_TARGETS", saved.priv],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});
afterAll(async () => db?.close());

// Names under .test do not resolve, so the SSRF check leaves them to connect time and only the scheme decides.
const body = (url: string, id?: string) => ({ ...(id ? { id } : {}), name: "Lincoln", url, eventTypes: ["assignment.graded"], tenant: "lincoln" });

describe("https by default", () => {
  it("refuses http:// on create and PATCH with a 400 that says why, writing nothing", async () => {
    delete process.env.HOOKLEDGER_ALLOW_HTTP_TARGETS;
    delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
    const ok = await call(subs.POST, { token: manager, body: body("https://sis.lincoln.example.test/hooks", "sub_https") });
    expect(ok.status, ok.text).toBe(201);
    const before = await writeCounts(db.pool);
    const created = await call(subs.POST, { token: manager, body: body("http://sis.lincoln.example.test/hooks") });
    expect(created.status, created.text).toBe(400);
    expect(created.json.error.message).toMatch(/http:\/\/ targets are refused: .*unencrypted.*HOOKLEDGER_ALLOW_HTTP_TARGETS=1/);
    const patched = await call(sub.PATCH, { token: manager, params: { id: "sub_https" }, body: { url: "http://sis.lincoln.example.test/hooks" } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.json.error.message).toMatch(/http:\/\/ targets are refused/);
    expect(await writeCounts(db.pool)).toEqual(before);
  });

  it("HOOKLEDGER_ALLOW_HTTP_TARGETS=1 allows it", async () => {
    delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
    process.env.HOOKLEDGER_ALLOW_HTTP_TARGETS = "1";
    const r = await call(subs.POST, { token: manager, body: body("http://sis.lincoln.example.test/hooks") });
    expect(r.status, r.text).toBe(201);
    // A private address is still refused for being private.
    const priv = await call(subs.POST, { token: manager, body: body("http://127.0.0.1:9/hooks") });
    expect(priv.status).toBe(400);
    expect(priv.json.error.message).toMatch(/loopback/);
  });

  it("HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1 (tests, the demo) allows it too", async () => {
    delete process.env.HOOKLEDGER_ALLOW_HTTP_TARGETS;
    process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
    const r = await call(subs.POST, { token: manager, body: body("http://127.0.0.1:9/hooks") });
    expect(r.status, r.text).toBe(201);
  });
});
