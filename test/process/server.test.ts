// server.ts, the dashboard's server: POST /api/v1/events and /events/batch are
// answered by their route handlers without Next's pipeline, everything else by
// Next. Two real server.ts processes over the existing `next build`, each on
// its own database seeded the same way: one with the fast path, one with
// HOOKLEDGER_SERVER_FAST_PATH=0 (every request through Next, as `next start`
// served it). The same requests must get the same answers: status, body (ids
// the database generates aside) and headers (hop-by-hop ones aside).
// Then, in-process with a stand-in for Next: the fast paths never reach it,
// every other request does.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { freePort } from "../../lib/db/embedded";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as events from "../../app/api/v1/events/route";
import * as batch from "../../app/api/v1/events/batch/route";
import { MAX_BODY_BYTES } from "../../lib/api/handler";
import { createHookledgerServer, type HeaderRule } from "../../lib/server/http";
import nextConfig from "../../next.config";

type Side = { name: string; db: TestDb; producer: string; support: string; admin: string; port: number; child: ChildProcess; output: string[] };
const sides: Side[] = [];
const dbs: TestDb[] = [];

async function seed(db: TestDb) {
  const admin = await tokenFor(db.prisma, "admin");
  for (const [id, tenant] of [
    ["sub_lincoln_sis", "lincoln"],
    ["sub_lincoln_lms", "lincoln"],
    ["sub_analytics", null],
  ] as const) {
    const r = await call(subs.POST, {
      token: admin,
      body: { id, name: id, url: `https://${id}.example.test/hooks`, eventTypes: ["assignment.graded"], ...(tenant ? { tenant } : {}) },
    });
    expect(r.status, r.text).toBe(201);
  }
  return { admin, producer: await tokenFor(db.prisma, "producer"), support: await tokenFor(db.prisma, "support") };
}

async function startServer(db: TestDb, env: Record<string, string>, output: string[]): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.resolve("bin/run-ts.mjs"), "server.ts", "-p", String(port), "-H", "127.0.0.1"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: db.url, HOOKLEDGER_SAMPLER: "0", LOG_LEVEL: "warn", NEXT_TELEMETRY_DISABLED: "1", ...env },
  });
  child.stdout!.on("data", (b) => output.push(String(b)));
  child.stderr!.on("data", (b) => output.push(String(b)));
  const end = Date.now() + 90_000;
  while (!output.join("").includes("listening on")) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`server.ts did not start:\n${output.join("")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, child };
}

beforeAll(async () => {
  // The dashboard half is the production build, as `hookledger start` serves it.
  expect(fs.existsSync(".next/BUILD_ID"), "run `npx next build` first").toBe(true);
  for (const [name, env] of [
    ["fast", {}],
    ["next", { HOOKLEDGER_SERVER_FAST_PATH: "0" }],
  ] as const) {
    const db = await createTestDatabase();
    dbs.push(db);
    const tokens = await seed(db);
    const output: string[] = [];
    const { port, child } = await startServer(db, env, output);
    sides.push({ name, db, ...tokens, port, child, output });
  }
}, 240_000);

afterAll(async () => {
  for (const s of sides) s.child.kill("SIGKILL");
  for (const db of dbs) await db.close();
});

type Answer = { status: number; headers: Record<string, string>; body: string };

/** One HTTP request, raw enough to send a chunked body without a length. */
function request(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; chunked?: boolean }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: opts.method ?? "POST", path: opts.path, headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
        const raw = Buffer.concat(chunks);
        const body = headers["content-encoding"] === "gzip" ? zlib.gunzipSync(raw) : headers["content-encoding"] === "deflate" ? zlib.inflateSync(raw) : raw;
        resolve({ status: res.statusCode!, headers, body: body.toString("utf8") });
      });
      res.on("error", reject);
    });
    // The server may answer an oversized upload and close before it is all sent.
    req.on("error", (err: NodeJS.ErrnoException) => (err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err)));
    if (opts.body !== undefined) {
      if (opts.chunked) {
        const b = Buffer.from(opts.body);
        for (let i = 0; i < b.length; i += 64 * 1024) req.write(b.subarray(i, i + 64 * 1024));
      } else req.write(opts.body);
    }
    req.end();
  });
}

/** POSTs 10 MB chunked to /api/v1/events, stopping when the answer comes (as a client whose upload is refused would). */
function postChunked(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/api/v1/events", headers: { ...headers, "transfer-encoding": "chunked" } });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode!);
      req.destroy();
    });
    req.on("error", (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (!answered && sent < 10 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      if (!answered) req.end();
    };
    write();
  });
}

// Hop-by-hop and per-response framing: how the body is framed, not what the answer says.
const FRAMING = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/** The answer with the database's generated ids replaced, and without framing headers. */
function comparable(a: Answer) {
  const headers = Object.fromEntries(Object.entries(a.headers).filter(([k]) => !FRAMING.has(k)));
  let body: unknown = a.body;
  try {
    body = JSON.parse(a.body, (k, v) => (k === "id" && typeof v === "string" && /^dlv_/.test(v) ? "<delivery id>" : v));
  } catch {
    /* not JSON: compared as text */
  }
  return { status: a.status, headers, body };
}

const graded = (id: string, score = 93) => ({
  id,
  type: "assignment.graded",
  data: { studentId: "stu_881", assignmentId: "asg_7", score },
  subject: { tenant: "lincoln", studentId: "stu_881", assignmentId: "asg_7" },
});

type Case = {
  name: string;
  status: number;
  req: (s: Side) => { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; chunked?: boolean };
};
const json = (token: string | null, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  ...(token ? { authorization: `Bearer ${token}` } : {}),
  ...extra,
});
const big = JSON.stringify(graded("evt_big", 1)).replace('"score":1', `"score":1,"pad":"${"x".repeat(MAX_BODY_BYTES)}"`);

// In order: later cases republish what earlier ones created.
const CASES: Case[] = [
  { name: "a new event: 202", status: 202, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: JSON.stringify(graded("evt_s1")) }) },
  { name: "the same again: 200", status: 200, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: JSON.stringify(graded("evt_s1")) }) },
  { name: "changed content: 409", status: 409, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: JSON.stringify(graded("evt_s1", 12)) }) },
  { name: "invalid event: 400", status: 400, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: JSON.stringify({ id: "evt_s2" }) }) },
  { name: "malformed JSON: 400", status: 400, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: '{"id": ' }) },
  { name: "no token: 401", status: 401, req: () => ({ path: "/api/v1/events", headers: json(null), body: JSON.stringify(graded("evt_s3")) }) },
  { name: "support's token: 403", status: 403, req: (s) => ({ path: "/api/v1/events", headers: json(s.support), body: JSON.stringify(graded("evt_s4")) }) },
  { name: "declared length over the limit: 413", status: 413, req: (s) => ({ path: "/api/v1/events", headers: json(s.producer), body: big }) },
  {
    name: "chunked body over the limit: 413",
    status: 413,
    req: (s) => ({ path: "/api/v1/events", headers: json(s.producer, { "transfer-encoding": "chunked" }), body: big, chunked: true }),
  },
  {
    name: "not JSON: 415",
    status: 415,
    req: (s) => ({ path: "/api/v1/events", headers: { "content-type": "text/plain", authorization: `Bearer ${s.producer}` }, body: "hi" }),
  },
  {
    name: "with a query string: 202",
    status: 202,
    req: (s) => ({ path: "/api/v1/events?source=sis", headers: json(s.producer), body: JSON.stringify(graded("evt_s5")) }),
  },
  {
    name: "behind a TLS proxy (HSTS): 202",
    status: 202,
    req: (s) => ({ path: "/api/v1/events", headers: json(s.producer, { "x-forwarded-proto": "https" }), body: JSON.stringify(graded("evt_s6")) }),
  },
  {
    name: "batch, mixed: 200 with per-event results",
    status: 200,
    req: (s) => ({
      path: "/api/v1/events/batch",
      headers: json(s.producer),
      body: JSON.stringify({ events: [graded("evt_b1"), { id: "evt_b2" }, graded("evt_s1"), graded("evt_s5", 1)] }),
    }),
  },
  {
    name: "batch, gzip accepted (Next compresses an answer over 1 KB): 200",
    status: 200,
    req: (s) => ({
      path: "/api/v1/events/batch",
      headers: json(s.producer, { "accept-encoding": "gzip, deflate" }),
      body: JSON.stringify({ events: Array.from({ length: 12 }, (_, i) => graded(`evt_z${i}`)) }),
    }),
  },
  { name: "batch, empty: 400", status: 400, req: (s) => ({ path: "/api/v1/events/batch", headers: json(s.producer), body: JSON.stringify({ events: [] }) }) },
  { name: "batch, no token: 401", status: 401, req: () => ({ path: "/api/v1/events/batch", headers: json(null), body: JSON.stringify({ events: [graded("evt_b3")] }) }) },
  // Not the fast path: Next answers both servers.
  {
    name: "GET on the publish path (Next: 405)",
    status: 405,
    req: (s) => ({ method: "GET", path: "/api/v1/events", headers: { authorization: `Bearer ${s.producer}` } }),
  },
];

describe("server.ts answers the publish routes as Next does", () => {
  for (const c of CASES)
    it(c.name, async () => {
      const answers = await Promise.all(sides.map((s) => request(s.port, c.req(s))));
      const [a, b] = answers.map(comparable);
      expect(b.status, `through Next: ${answers[1].body}`).toBe(c.status);
      expect(a).toEqual(b);
    });

  it("wrote the same rows on both sides (and nothing for the refused requests)", async () => {
    const [a, b] = await Promise.all(sides.map((s) => tableCounts(s.db.pool)));
    expect(a).toEqual(b);
    const ids = await Promise.all(sides.map(async (s) => (await s.db.pool.query("SELECT id FROM events ORDER BY id")).rows.map((r) => r.id as string)));
    expect(ids[0]).toEqual(["evt_b1", "evt_s1", "evt_s5", "evt_s6", ...Array.from({ length: 12 }, (_, i) => `evt_z${i}`).sort()]);
    expect(ids[0]).toEqual(ids[1]);
  });

  it("sends pages and health to Next (the proxy's CSP with a nonce, the sign-in redirect)", async () => {
    const s = sides[0];
    const health = await request(s.port, { method: "GET", path: "/api/health" });
    expect([200, 503]).toContain(health.status);
    const home = await request(s.port, { method: "GET", path: "/" });
    expect(home.status).toBe(307);
    expect(home.headers.location).toMatch(/\/signin$/);
    const signin = await request(s.port, { method: "GET", path: "/signin" });
    expect(signin.status).toBe(200);
    expect(signin.headers["content-type"]).toMatch(/text\/html/);
    expect(signin.headers["content-security-policy"]).toMatch(/'nonce-[A-Za-z0-9+/=]+'/);
  });
});

describe("the fast path in-process (a stand-in for Next)", () => {
  let server: http.Server;
  let port: number;
  const toNext: string[] = [];
  beforeAll(async () => {
    const rules = (await nextConfig.headers!()) as HeaderRule[];
    server = createHookledgerServer({
      routes: new Map([
        ["/api/v1/events", { handler: events.POST, maxBytes: MAX_BODY_BYTES }],
        ["/api/v1/events/batch", { handler: batch.POST, maxBytes: MAX_BODY_BYTES }],
      ]),
      rules,
      fallback: (req, res) => {
        toNext.push(`${req.method} ${req.url}`);
        res.statusCode = 299;
        res.end();
      },
      urlHost: { hostname: "127.0.0.1", port: 0 },
      onError: () => {},
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("answers POST /api/v1/events and /events/batch itself; sends every other request to Next", async () => {
    const s = sides[0];
    const one = await request(port, { path: "/api/v1/events", headers: json(null), body: "{}" });
    const many = await request(port, { path: "/api/v1/events/batch?x=1", headers: json(null), body: "{}" });
    expect([one.status, many.status]).toEqual([401, 401]);
    expect(one.headers["x-frame-options"]).toBe("DENY");
    expect(one.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(toNext).toEqual([]);
    for (const [method, p] of [
      ["GET", "/api/v1/events"],
      ["POST", "/api/v1/events/"],
      ["POST", "/api/v1/events/batch/x"],
      ["POST", "/api/v1/subscriptions"],
      ["GET", "/"],
    ])
      expect((await request(port, { method, path: p, headers: json(s.producer), body: method === "GET" ? undefined : "{}" })).status).toBe(299);
    expect(toNext).toEqual(["GET /api/v1/events", "POST /api/v1/events/", "POST /api/v1/events/batch/x", "POST /api/v1/subscriptions", "GET /"]);
  });

  it("answers a 10 MB chunked upload without buffering it, and the client reads the answer", async () => {
    // In-process: auth comes first in the handler, as through Next, so an unknown token is 401.
    expect(await Promise.all(Array.from({ length: 3 }, () => postChunked(port, json("hl_nobody"))))).toEqual([401, 401, 401]);
    // server.ts with a producer token: 413 once the limit is passed.
    const s = sides[0];
    expect(await postChunked(s.port, json(s.producer))).toBe(413);
  });
});
