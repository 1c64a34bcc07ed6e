// Input limits at the API edge: each refused with a clear 4xx, never a 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as events from "../../app/api/v1/events/route";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import { MAX_BODY_BYTES } from "../../lib/api/handler";

let db: TestDb;
let producer: string;
let admin: string;
beforeAll(async () => {
  db = await createTestDatabase();
  producer = await tokenFor(db.prisma, "producer");
  admin = await tokenFor(db.prisma, "admin");
});
afterAll(async () => db?.close());

const event = (extra: Record<string, unknown> = {}) => ({ id: `evt_${Math.random().toString(36).slice(2)}`, type: "assignment.graded", data: { score: 1 }, ...extra });

describe("limits", () => {
  it("a body over the payload limit → 413 naming the limit, and nothing is written", async () => {
    const before = await tableCounts(db.pool);
    const r = await call(events.POST, { token: producer, body: event({ data: { blob: "x".repeat(MAX_BODY_BYTES) } }) });
    expect(r.status).toBe(413);
    expect(r.json.error.message).toContain(String(MAX_BODY_BYTES));
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("event type, event id and subject key formats → 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "Assignment Graded" }, "body.type"],
      [{ type: "graded" }, "body.type"],
      [{ id: "evt 1; drop" }, "body.id"],
      [{ id: "x".repeat(201) }, "body.id"],
      [{ subject: { "student id": "s1" } }, "body.subject"],
      [{ subject: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])) }, "body.subject"],
      [{ subject: { studentId: "s".repeat(201) } }, "body.subject"],
      [{ unexpected: true }, "body"],
    ];
    for (const [extra, field] of cases) {
      const r = await call(events.POST, { token: producer, body: event(extra) });
      expect(r.status, JSON.stringify(extra).slice(0, 80)).toBe(400);
      expect(r.json.error.message).toContain(field);
    }
  });

  it("not JSON → 415; malformed JSON → 400", async () => {
    expect((await call(events.POST, { token: producer, rawBody: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(415);
    expect((await call(events.POST, { token: producer, rawBody: "{nope" })).status).toBe(400);
  });

  it("page sizes over the maximum → 400", async () => {
    for (const q of ["limit=201", "limit=0", "limit=-1", "limit=abc"]) {
      const r = await call(deliveries.GET, { token: admin, path: `/api/v1/deliveries?${q}` });
      expect(r.status, q).toBe(400);
    }
    expect((await call(deliveries.GET, { token: admin, path: "/api/v1/deliveries?limit=200" })).status).toBe(200);
  });

  it("subscription fields: event type filters, too many types, long names → 400", async () => {
    const base = { name: "Lincoln", url: "https://lincoln.example.test/h", eventTypes: ["assignment.graded"] };
    for (const extra of [
      { eventTypes: ["NOT A TYPE"] },
      { eventTypes: [] },
      { eventTypes: Array.from({ length: 101 }, (_, i) => `a.t${i}`) },
      { name: "n".repeat(201) },
      { secret: "plaintext" },
    ]) {
      const r = await call(subs.POST, { token: admin, body: { ...base, ...extra } });
      expect(r.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
    }
  });
});

/** A request body of `total` bytes produced lazily, with no Content-Length (as with Transfer-Encoding: chunked); counts what was pulled. */
function chunkedRequest(path: string, total: number, headers: Record<string, string>) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled >= total) return controller.close();
      seen.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const req = new Request(`http://localhost${path}`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
  return { req, seen };
}

describe("bodies are read as a stream and stopped at the limit", () => {
  it("a 10 MB chunked event body → 413 after reading little more than the limit", async () => {
    const { req, seen } = chunkedRequest("/api/v1/events", 10 * 1024 * 1024, { authorization: `Bearer ${producer}`, "content-type": "application/json" });
    expect(req.headers.get("content-length")).toBeNull();
    const res = await events.POST(req, { params: Promise.resolve({}) });
    expect(res.status).toBe(413);
    expect(seen.pulled).toBeLessThanOrEqual(MAX_BODY_BYTES + 2 * 64 * 1024);
    expect(seen.cancelled).toBe(true);
  });

  it("a chunked sign-in body over 8 KB → 413 without reading the rest", async () => {
    const { handleSignIn, SIGN_IN_MAX_BODY_BYTES } = await import("../../lib/auth/signin");
    expect(SIGN_IN_MAX_BODY_BYTES).toBe(8 * 1024);
    for (const type of ["application/json", "application/x-www-form-urlencoded"]) {
      const { req, seen } = chunkedRequest("/api/auth/signin", 10 * 1024 * 1024, { "content-type": type, origin: "http://localhost", host: "localhost" });
      const res = await handleSignIn(req);
      expect(res.status, type).toBe(413);
      expect(seen.pulled, type).toBeLessThanOrEqual(2 * 64 * 1024);
    }
  });

  it("a declared Content-Length over the limit is refused before reading", async () => {
    const { handleSignIn } = await import("../../lib/auth/signin");
    const res = await handleSignIn(
      new Request("http://localhost/api/auth/signin", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "9000", origin: "http://localhost", host: "localhost" },
        body: "x".repeat(9000),
      }),
    );
    expect(res.status).toBe(413);
  });
});

describe("numeric settings", () => {
  it("a malformed HOOKLEDGER_MAX_PAYLOAD_BYTES fails with a clear message instead of turning the limit off", async () => {
    const { envInt } = await import("../../lib/env");
    for (const raw of ["abc", "-1", "1.5", "0x10", "1e3x", ""]) {
      process.env.HOOKLEDGER_TEST_NUMBER = raw;
      try {
        if (raw === "") expect(envInt("HOOKLEDGER_TEST_NUMBER", { default: 7, min: 1 })).toBe(7);
        else expect(() => envInt("HOOKLEDGER_TEST_NUMBER", { default: 7, min: 1 }), raw).toThrow(/HOOKLEDGER_TEST_NUMBER must be a whole number/);
      } finally {
        delete process.env.HOOKLEDGER_TEST_NUMBER;
      }
    }
  });

  it.each([
    ["HOOKLEDGER_MAX_PAYLOAD_BYTES", "abc"],
    ["HOOKLEDGER_SAMPLE_INTERVAL_MS", "15s"],
  ])("`hookledger start` with %s=%s exits 1 at once, naming the setting", async (name, value) => {
    const { spawnSync } = await import("node:child_process");
    const r = spawnSync(process.execPath, ["bin/hookledger.mjs", "start", "--workers", "0", "--port", "3999"], {
      env: { ...process.env, [name]: value, HOOKLEDGER_DATA_DIR: ".data/test-bad-setting" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${name} must be a whole number`));
  });
});
