// Endpoint headers, end to end: saved through the API, sent by a real worker
// process to a real receiver, and never readable afterwards: not in any
// column of any table, not in the API's reads, not in the worker's log (at
// debug, every attempt logged), not in the audit log. And every bad header
// is a 400 that writes nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { dumpDatabase, writeCounts } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import * as events from "../../app/api/v1/events/route";
import { maskHeaders, openEndpointAuth, redactSecrets } from "../../lib/subscriptions/endpoint-auth";
import { currentSecretsKeyId, openEndpointValue, rekeySecrets, sealEndpointValue } from "../../lib/subscriptions/secrets";
import { resetSecretKeyCache } from "../../lib/auth/keys";

let db: TestDb;
let admin: string;
let manager: string;
let producer: string;
let receiver: Receiver;
const children: ChildProcess[] = [];

// Distinctive values, so a grep finds any copy of them.
const TOKEN = `tok_${randomBytes(12).toString("hex")}`;
const TOKEN2 = `tok2_${randomBytes(12).toString("hex")}`;
const KEY = `dk_${randomBytes(12).toString("hex")}`;
const SECRETS = [TOKEN, TOKEN2, KEY];

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1"; // local http receivers
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  manager = await tokenFor(db.prisma, "manager");
  producer = await tokenFor(db.prisma, "producer");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  let first = true;
  receiver = await startReceiver((req, res) => {
    // The first answer echoes the request's credential, as a debugging endpoint might: it must not be stored.
    if (first) {
      first = false;
      res.writeHead(500, { "x-echo": String(req.headers.authorization) });
      return res.end(`rejected request with authorization ${req.headers.authorization} and key ${req.headers["x-district-key"]}`);
    }
    res.statusCode = 204;
    res.end();
  });
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await receiver?.close();
  await db?.close();
});

function spawnWorker(): ChildProcess & { output: string[] } {
  const child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "worker"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1",
      // Everything the worker would ever log about an attempt.
      LOG_LEVEL: "debug",
      HOOKLEDGER_WORKER_POLL_MS: "100",
      HOOKLEDGER_HEARTBEAT_MS: "500",
    },
    stdio: ["ignore", "pipe", "pipe"],
  }) as ChildProcess & { output: string[] };
  child.output = [];
  child.stdout!.on("data", (b: Buffer) => child.output.push(b.toString()));
  child.stderr!.on("data", (b: Buffer) => child.output.push(b.toString()));
  children.push(child);
  return child;
}

const exited = (c: ChildProcess) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once("exit", () => resolve())));

describe("endpoint headers", () => {
  it("reach the receiver on every attempt and are absent from the database, the API, the worker's log and the audit log", async () => {
    const created = await call(subs.POST, {
      token: manager,
      body: {
        id: "sub_lincoln",
        name: "Lincoln gateway",
        url: receiver.url,
        eventTypes: ["assignment.graded"],
        tenant: "lincoln",
        retryPolicy: { ladderSeconds: [1] },
        headers: { Authorization: `Bearer ${TOKEN}`, "X-District-Key": KEY },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.headers).toEqual({ Authorization: "Bearer ••••", "X-District-Key": "••••" });

    // Replaced through PATCH: the audit row names the change, with the old values masked.
    const patched = await call(sub.PATCH, {
      token: manager,
      params: { id: "sub_lincoln" },
      body: { headers: { Authorization: `Bearer ${TOKEN2}`, "X-District-Key": KEY } },
    });
    expect(patched.status, patched.text).toBe(200);
    const { rows: auditRows } = await db.pool.query("SELECT action, details FROM audit_entries WHERE target_id = 'sub_lincoln' ORDER BY created_at");
    expect(auditRows.map((r) => r.action)).toEqual(["subscription.create", "subscription.update"]);
    expect(auditRows[1].details).toEqual({ changed: ["headers"], before: { headers: { Authorization: "Bearer ••••", "X-District-Key": "••••" } } });

    const w = spawnWorker();
    const published = await call(events.POST, {
      token: producer,
      body: { id: "evt_auth_1", type: "assignment.graded", data: { studentId: "s-1", score: 91 }, subject: { tenant: "lincoln" } },
    });
    expect(published.status, published.text).toBe(202);
    const delivered = await waitFor(
      async () => {
        const { rows } = await db.pool.query("SELECT state FROM deliveries WHERE subscription_id = 'sub_lincoln' AND event_id = 'evt_auth_1'");
        return rows[0]?.state === "delivered";
      },
      30_000,
      "the delivery after one retry",
    );
    expect(delivered).toBe(true);
    expect(receiver.received).toHaveLength(2); // the 500, then the 204
    for (const r of receiver.received) {
      expect(r.headers.authorization).toBe(`Bearer ${TOKEN2}`);
      expect(r.headers["x-district-key"]).toBe(KEY);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,/);
    }
    // The echoed credential was masked before the attempt's answer was stored.
    const { rows: attempts } = await db.pool.query("SELECT status_code, response_excerpt, response_headers FROM attempts ORDER BY started_at");
    expect(attempts[0].status_code).toBe(500);
    expect(attempts[0].response_excerpt).toBe("rejected request with authorization •••• and key ••••");
    expect(attempts[0].response_headers["x-echo"]).toBe("••••");

    w.kill("SIGTERM");
    await exited(w);
    const log = w.output.join("");
    expect(log).toContain("attempt failed; retry scheduled"); // the log was captured, at debug
    expect(log).toContain("delivered");

    // Reads of every kind.
    const reads = [await call(sub.GET, { token: admin, params: { id: "sub_lincoln" } }), await call(subs.GET, { token: admin })];
    for (const r of reads) expect(r.status, r.text).toBe(200);
    expect(reads[0].json.headers).toEqual({ Authorization: "Bearer ••••", "X-District-Key": "••••" });
    const dump = await dumpDatabase(db.pool);
    expect(dump).toContain("sub_lincoln"); // the dump reads the tables
    const { rows: sealed } = await db.pool.query("SELECT endpoint_headers FROM subscriptions WHERE id = 'sub_lincoln'");
    expect(sealed[0].endpoint_headers).toMatch(/^v2:/);
    const auditText = JSON.stringify((await db.pool.query("SELECT * FROM audit_entries")).rows);
    for (const secret of SECRETS) {
      for (const [where, text] of [
        ["database", dump],
        ["API reads", reads.map((r) => r.text).join("\n") + created.text + patched.text],
        ["worker log", log],
        ["audit table", auditText],
      ])
        expect(text.includes(secret), `${secret.slice(0, 5)}… found in the ${where}`).toBe(false);
    }
  });

  it("headers: null clears them: the next delivery carries none", async () => {
    const cleared = await call(sub.PATCH, { token: manager, params: { id: "sub_lincoln" }, body: { headers: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.json.headers).toBeNull();
    const { rows } = await db.pool.query("SELECT endpoint_headers, endpoint_header_view FROM subscriptions WHERE id = 'sub_lincoln'");
    expect(rows[0]).toEqual({ endpoint_headers: null, endpoint_header_view: null });
    const w = spawnWorker();
    const before = receiver.received.length;
    expect(
      (await call(events.POST, { token: producer, body: { id: "evt_auth_2", type: "assignment.graded", data: { studentId: "s-2" }, subject: { tenant: "lincoln" } } }))
        .status,
    ).toBe(202);
    await waitFor(async () => receiver.received.length > before, 20_000, "the delivery");
    const last = receiver.received.at(-1)!;
    expect(last.headers.authorization).toBeUndefined();
    expect(last.headers["x-district-key"]).toBeUndefined();
    w.kill("SIGTERM");
    await exited(w);
  });
});

describe("bad headers are a 400 that writes nothing", () => {
  const base = { name: "Bad", url: "https://bad.example.test/h", eventTypes: ["assignment.graded"], tenant: "lincoln" };
  const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"]));
  const big = { "X-Big-1": "a".repeat(4100), "X-Big-2": "b".repeat(4100) };
  const cases: [string, unknown, RegExp][] = [
    ["a name with a space", { "Bad Header": "x" }, /not a header name/],
    ["a name with a colon", { "X-A:b": "x" }, /not a header name/],
    ["an empty name", { "": "x" }, /not a header name/],
    ["a value with CR LF", { "X-District-Key": "abc\r\nX-Injected: 1" }, /CR, LF/],
    ["a value with LF", { "X-District-Key": "abc\nd" }, /CR, LF/],
    ["a value with a character past Latin-1", { "X-District-Key": "key-✓" }, /cannot carry/],
    ["a value with DEL", { "X-District-Key": "key\x7f" }, /control character/],
    ["an empty value", { "X-District-Key": " " }, /empty/],
    ["a number as value", { "X-District-Key": 5 }, /./],
    ["Host", { Host: "evil.example" }, /Host cannot be set/],
    ["host (any case)", { hOsT: "evil.example" }, /cannot be set/],
    ["Content-Length", { "Content-Length": "1" }, /Content-Length cannot be set/],
    ["Connection", { Connection: "close" }, /hop-by-hop/],
    ["Transfer-Encoding", { "Transfer-Encoding": "chunked" }, /hop-by-hop/],
    ["Keep-Alive", { "Keep-Alive": "timeout=5" }, /hop-by-hop/],
    ["TE", { TE: "trailers" }, /hop-by-hop/],
    ["Upgrade", { Upgrade: "h2c" }, /hop-by-hop/],
    ["Trailer", { Trailer: "x" }, /hop-by-hop/],
    ["Proxy-Authorization", { "Proxy-Authorization": "Basic eA==" }, /hop-by-hop/],
    ["webhook-id", { "webhook-id": "msg_1" }, /Standard Webhooks/],
    ["Webhook-Signature", { "Webhook-Signature": "v1,x" }, /Standard Webhooks/],
    ["the same name twice", { Authorization: "Bearer a", authorization: "Bearer b" }, /twice/],
    ["21 headers", many, /at most 20 headers/],
    ["more than 8 KB", big, /at most 8192/],
    ["not an object", "Authorization: Bearer x", /./],
  ];

  it.each(cases)("%s", async (_what, headers, message) => {
    const before = await writeCounts(db.pool);
    const created = await call(subs.POST, { token: manager, body: { ...base, headers } });
    expect(created.status, created.text).toBe(400);
    expect(created.text).toMatch(message);
    const patched = await call(sub.PATCH, { token: manager, params: { id: "sub_lincoln" }, body: { headers } });
    expect(patched.status, patched.text).toBe(400);
    // The value of a refused header is never echoed (it may be a credential).
    const values = typeof headers === "object" && headers ? Object.values(headers).filter((v): v is string => typeof v === "string" && v.length >= 5) : [];
    for (const v of values) for (const r of [created, patched]) expect(r.text.includes(v), `${JSON.stringify(v.slice(0, 20))} echoed`).toBe(false);
    expect(await writeCounts(db.pool)).toEqual(before);
  });
});

describe("masking and redaction", () => {
  it("keeps an Authorization scheme and nothing of the value", () => {
    expect(maskHeaders({ Authorization: "Bearer abc.def", "proxy-authorization": "Basic x", "X-Key": "Bearer looks-like-a-scheme", Other: "secret" })).toEqual({
      Authorization: "Bearer ••••",
      "proxy-authorization": "Basic ••••",
      "X-Key": "••••",
      Other: "••••",
    });
    expect(maskHeaders({ Authorization: "opaque-token-without-scheme" })).toEqual({ Authorization: "••••" });
  });

  it("masks a configured value, and its token alone, wherever an answer echoes it", () => {
    expect(redactSecrets("got Bearer abcdef123 and abcdef123", ["Bearer abcdef123"])).toBe("got •••• and ••••");
    expect(redactSecrets("short ok", ["ok"])).toBe("short ok");
    expect(redactSecrets(null, ["whatever"])).toBeNull();
  });
});

describe("sealing", () => {
  it("a sealed value opens only on its own subscription and column", () => {
    const sealed = sealEndpointValue('{"Authorization":"Bearer x"}', { subscriptionId: "sub_a", column: "headers" });
    expect(openEndpointValue(sealed, { subscriptionId: "sub_a", column: "headers" })).toBe('{"Authorization":"Bearer x"}');
    expect(() => openEndpointValue(sealed, { subscriptionId: "sub_b", column: "headers" })).toThrow(/do not decrypt/);
    expect(() => openEndpointValue(sealed, { subscriptionId: "sub_a", column: "tls" })).toThrow(/do not decrypt/);
  });

  it("`secrets rekey` re-seals endpoint headers under a new HOOKLEDGER_SECRET_KEY", async () => {
    const oldKey = process.env.HOOKLEDGER_SECRET_KEY!;
    const r0 = await call(subs.POST, {
      token: manager,
      body: { id: "sub_rekey_h", name: "Rekey", url: receiver.url, eventTypes: ["assignment.graded"], tenant: "lincoln", headers: { "X-District-Key": KEY } },
    });
    expect(r0.status, r0.text).toBe(201);
    const useKeys = (current: string, previous?: string) => {
      process.env.HOOKLEDGER_SECRET_KEY = current;
      if (previous) process.env.HOOKLEDGER_SECRET_KEY_PREVIOUS = previous;
      else delete process.env.HOOKLEDGER_SECRET_KEY_PREVIOUS;
      resetSecretKeyCache();
    };
    try {
      const newKey = randomBytes(32).toString("base64");
      useKeys(newKey, oldKey);
      const r = await rekeySecrets(db.prisma);
      expect(r.failed).toEqual([]);
      useKeys(newKey);
      const row = await db.prisma.subscription.findUniqueOrThrow({ where: { id: "sub_rekey_h" } });
      expect(row.endpointHeaders!.split(":")[1]).toBe(currentSecretsKeyId());
      expect(openEndpointAuth("sub_rekey_h", { headers: row.endpointHeaders, tls: null }).headers).toEqual({ "X-District-Key": KEY });
    } finally {
      useKeys(oldKey);
    }
  });
});
