// POST /api/v1/subscriptions/:id/test against real receivers: the endpoint's
// answer comes back in the API, the test is recorded and audited but is not a
// delivery (no delivery, attempt or count changes), a re-sent event keeps its
// bytes and signature under a test webhook-id, a catalogued type's example goes
// out as an event of that type would, and our own 4xx send nothing
// and write nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/worker-helpers";
import { makePki, startHttpsReceiver, writeCounts, type HttpsReceiver, type Pki } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as testRoute from "../../app/api/v1/subscriptions/[id]/test/route";
import * as events from "../../app/api/v1/events/route";
import { secretKey, signOne } from "../../lib/signing/standard-webhooks";

let db: TestDb;
let manager: string;
let support: string;
let producer: string;
let receiver: Receiver;
let tlsReceiver: HttpsReceiver;
let pki: Pki;
let secret: string;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  support = await tokenFor(db.prisma, "support");
  producer = await tokenFor(db.prisma, "producer");
  receiver = await startReceiver((req, res) => {
    res.writeHead(201, { "x-district-request": "req-42", "content-type": "text/plain" });
    res.end(`accepted ${req.headers["webhook-id"]} with key ${req.headers["x-district-key"] ? "present" : "missing"} ` + "x".repeat(6000));
  });
  pki = makePki();
  tlsReceiver = await startHttpsReceiver(pki, 202);
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  const created = await call(subs.POST, {
    token: manager,
    body: {
      id: "sub_test",
      name: "Lincoln",
      url: receiver.url,
      eventTypes: ["assignment.graded"],
      tenant: "lincoln",
      headers: { "X-District-Key": "district-key-123456" },
    },
  });
  expect(created.status, created.text).toBe(201);
  secret = created.json.secret;
});

afterAll(async () => {
  await receiver?.close();
  await tlsReceiver?.close();
  await db?.close();
});

const ledgerCounts = async () =>
  (
    await db.pool.query(
      `SELECT (SELECT count(*) FROM deliveries)::int AS deliveries, (SELECT count(*) FROM attempts)::int AS attempts,
              (SELECT coalesce(sum(n), 0)::int FROM delivery_state_counts) AS counted`,
    )
  ).rows[0];

describe("POST /api/v1/subscriptions/:id/test", () => {
  it("sends a signed hookledger.ping with the endpoint headers and answers with the endpoint's status, latency, headers and first 4 KB", async () => {
    const before = await ledgerCounts();
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 201, error: null, eventId: null, eventType: "hookledger.ping", url: receiver.url });
    expect(r.json.latencyMs).toBeGreaterThanOrEqual(0);
    expect(r.json.headers["x-district-request"]).toBe("req-42");
    expect(Buffer.byteLength(r.json.body)).toBe(4096);
    expect(r.json.body).toMatch(new RegExp(`^accepted ${r.json.id} with key present x+$`));

    const got = receiver.received.at(-1)!;
    expect(got.headers["hookledger-test"]).toBe("1");
    expect(got.headers["webhook-id"]).toBe(r.json.id);
    expect(r.json.id).toMatch(/^tst_/);
    expect(got.headers["x-district-key"]).toBe("district-key-123456");
    const body = JSON.parse(got.body.toString());
    expect(body).toMatchObject({ id: r.json.id, type: "hookledger.ping", data: { subscriptionId: "sub_test", purpose: "test" } });
    // Signed like a delivery: over webhook-id, webhook-timestamp and the exact bytes.
    expect(String(got.headers["webhook-signature"]).split(" ")).toContain(signOne(secretKey(secret), r.json.id, Number(got.headers["webhook-timestamp"]), got.body));

    // Recorded and audited, never a delivery.
    expect(await ledgerCounts()).toEqual(before);
    const { rows } = await db.pool.query("SELECT * FROM test_sends");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: r.json.id, subscription_id: "sub_test", status_code: 201, event_type: "hookledger.ping", actor: "token:test-manager" });
    const { rows: audit } = await db.pool.query("SELECT actor, details FROM audit_entries WHERE action = 'subscription.test'");
    expect(audit).toEqual([
      {
        actor: "token:test-manager",
        details: { testSendId: r.json.id, eventId: null, eventType: "hookledger.ping", statusCode: 201, errorClass: null, durationMs: r.json.latencyMs },
      },
    ]);

    const list = await call(testRoute.GET, { token: support, params: { id: "sub_test" } });
    expect(list.status).toBe(200);
    expect(list.json.items).toHaveLength(1);
    expect(list.json.items[0]).toEqual(r.json);
  });

  it("an empty POST is a ping however it is sent: no Content-Length and no Content-Type (curl -X POST), or JSON's type and no bytes", async () => {
    for (const headers of [{}, { "content-type": "application/json" }] as Record<string, string>[]) {
      // What Next hands the route for such a request: an empty stream, not a null body.
      const req = new Request("http://localhost/api/v1/subscriptions/sub_test/test", {
        method: "POST",
        headers: { authorization: `Bearer ${manager}`, ...headers },
        body: new ReadableStream({ start: (c) => c.close() }),
        duplex: "half",
      } as RequestInit);
      const res = await testRoute.POST(req, { params: Promise.resolve({ id: "sub_test" }) });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ status: 201, eventType: "hookledger.ping" });
    }
  });

  it("with {eventId}, sends that stored event's bytes under a test webhook-id", async () => {
    const pub = await call(events.POST, {
      token: producer,
      body: { id: "evt_graded_1", type: "assignment.graded", data: { studentId: "s-9", score: 77 }, subject: { tenant: "lincoln" } },
    });
    expect(pub.status, pub.text).toBe(202);
    const { rows } = await db.pool.query("SELECT e.payload, d.delivery_key FROM events e JOIN deliveries d ON d.event_id = e.id WHERE e.id = 'evt_graded_1'");
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, body: { eventId: "evt_graded_1" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 201, eventId: "evt_graded_1", eventType: "assignment.graded" });
    const got = receiver.received.at(-1)!;
    expect(got.body.equals(rows[0].payload)).toBe(true);
    expect(got.headers["webhook-id"]).toBe(r.json.id);
    expect(got.headers["webhook-id"]).not.toBe(rows[0].delivery_key); // a receiver de-duplicating on webhook-id still applies the real one
    expect(got.headers["hookledger-test"]).toBe("1");
  });

  it("with {eventType}, sends the event catalog's example of a type the subscription takes, as a real event of it would arrive", async () => {
    const by = { createdBy: "test", updatedBy: "test" };
    await db.prisma.eventType.createMany({
      data: [
        { type: "attendance.recorded", description: "A teacher took attendance.", example: { student_id: "stu_1", status: "present" }, ...by },
        { type: "roster.updated", description: "A class roster changed.", ...by },
        { type: "assignment.late", description: "Not taken by the subscription.", example: { student_id: "stu_2" }, ...by },
      ],
    });
    const made = await call(subs.POST, {
      token: manager,
      body: { id: "sub_examples", name: "Examples", url: receiver.url, eventTypes: ["attendance.recorded", "roster.updated", "term.closed"], tenant: "lincoln" },
    });
    expect(made.status, made.text).toBe(201);
    const before = await ledgerCounts();
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_examples" }, body: { eventType: "attendance.recorded" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 201, eventId: null, eventType: "attendance.recorded" });
    const got = receiver.received.at(-1)!;
    const body = JSON.parse(got.body.toString());
    expect(body).toEqual({ id: r.json.id, type: "attendance.recorded", timestamp: expect.any(String), data: { student_id: "stu_1", status: "present" } });
    expect(got.headers["webhook-id"]).toBe(r.json.id);
    expect(got.headers["hookledger-test"]).toBe("1");
    expect(String(got.headers["webhook-signature"]).split(" ")).toContain(
      signOne(secretKey(made.json.secret), r.json.id, Number(got.headers["webhook-timestamp"]), got.body),
    );
    expect(await ledgerCounts()).toEqual(before);
    const { rows } = await db.pool.query("SELECT event_id, event_type FROM test_sends WHERE id = $1", [r.json.id]);
    expect(rows).toEqual([{ event_id: null, event_type: "attendance.recorded" }]);

    // Refusals that say what it could send instead; nothing sent, nothing written.
    const seen = receiver.received.length;
    const counts = await writeCounts(db.pool);
    const refused = async (body: unknown) => (await call(testRoute.POST, { token: manager, params: { id: "sub_examples" }, body })).json.error;
    expect(await refused({ eventType: "assignment.late" })).toMatchObject({
      code: "bad_request",
      message:
        "sub_examples does not take assignment.late, so it would never receive one; test one of its types (attendance.recorded, roster.updated, term.closed) or add assignment.late to them.",
    });
    expect((await refused({ eventType: "roster.updated" })).message).toBe(
      "The event catalog has no example of roster.updated; send a ping, or one of sub_examples's events by id.",
    );
    expect(await refused({ eventType: "term.closed" })).toMatchObject({
      code: "not_found",
      message: expect.stringMatching(/^Event type term.closed is not in the event catalog/),
    });
    expect((await refused({ eventType: "attendance.recorded", eventId: "evt_graded_1" })).code).toBe("validation_failed");
    expect(receiver.received).toHaveLength(seen);
    expect(await writeCounts(db.pool)).toEqual(counts);
  });

  it("an endpoint that does not answer: 200 with status null and the error, recorded", async () => {
    const down = await startReceiver();
    const url = down.url;
    await down.close();
    await db.pool.query("UPDATE subscriptions SET url = $1 WHERE id = 'sub_test'", [url]);
    try {
      const r = await call(testRoute.POST, { token: manager, params: { id: "sub_test" } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ status: null, headers: null, body: null, errorClass: "connect_refused" });
      expect(r.json.error).toMatch(/ECONNREFUSED/);
      const { rows } = await db.pool.query("SELECT status_code, error_class FROM test_sends WHERE id = $1", [r.json.id]);
      expect(rows[0]).toEqual({ status_code: null, error_class: "connect_refused" });
    } finally {
      await db.pool.query("UPDATE subscriptions SET url = $1 WHERE id = 'sub_test'", [receiver.url]);
    }
  });

  it("presents the subscription's client certificate to an mTLS endpoint", async () => {
    const created = await call(subs.POST, {
      token: manager,
      body: {
        id: "sub_tls",
        name: "Lincoln mTLS",
        url: tlsReceiver.url,
        eventTypes: ["assignment.graded"],
        tenant: "lincoln",
        tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey, ca: pki.ca },
      },
    });
    expect(created.status, created.text).toBe(201);
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_tls" }, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 202, body: '{"ok":true,"by":"lincoln gateway"}' });
    expect(r.json.headers["x-district-gateway"]).toBe("lincoln-gw-1");
    expect(tlsReceiver.received.at(-1)!.peerSubject).toBe("hookledger.lincoln.example");
  });

  it("the SSRF guard applies: a blocked target is answered as an error, nothing is sent", async () => {
    process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "0";
    // The dashboard's sender reads the flag when made: drop it so the next test send makes one with the guard on.
    const g = globalThis as { __hookledgerTestSender?: { close(): Promise<void> } };
    const dropSender = async () => {
      await g.__hookledgerTestSender?.close();
      g.__hookledgerTestSender = undefined;
    };
    await dropSender();
    const seen = receiver.received.length;
    try {
      const r = await call(testRoute.POST, { token: manager, params: { id: "sub_test" } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ status: null, errorClass: "target_blocked" });
      expect(receiver.received).toHaveLength(seen);
    } finally {
      process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
      await dropSender();
    }
  });

  it("at most 10 test sends a minute per subscription: the 11th is a 429 that sends and writes nothing", async () => {
    const made = await call(subs.POST, {
      token: manager,
      body: { id: "sub_flood", name: "Flood", url: receiver.url, eventTypes: ["assignment.graded"], tenant: "lincoln" },
    });
    expect(made.status, made.text).toBe(201);
    for (let i = 0; i < 10; i++) expect((await call(testRoute.POST, { token: manager, params: { id: "sub_flood" } })).status).toBe(200);
    const seen = receiver.received.length;
    const before = await writeCounts(db.pool);
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_flood" } });
    expect(r.status, r.text).toBe(429);
    expect(r.json.error.message).toMatch(/10 test sends in the last minute/);
    expect(receiver.received).toHaveLength(seen);
    expect(await writeCounts(db.pool)).toEqual(before);
    // Another subscription is not held back.
    expect((await call(testRoute.POST, { token: manager, params: { id: "sub_test" } })).status).toBe(200);
  });

  it("our own refusals send nothing and write nothing", async () => {
    const seen = receiver.received.length;
    const before = await writeCounts(db.pool);
    const cases = [
      [await call(testRoute.POST, { token: manager, params: { id: "sub_nope" }, body: {} }), 404],
      [await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, body: { eventId: "evt_unknown" } }), 404],
      [await call(testRoute.POST, { token: manager, params: { id: "sub_tls" }, body: { eventId: "evt_graded_1" } }), 404], // another subscription's event
      [await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, body: { eventId: 5 } }), 400],
      [await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, body: { url: "https://elsewhere.example" } }), 400],
      [await call(testRoute.POST, { token: manager, params: { id: "sub_test" }, rawBody: "{nope" }), 400],
      [await call(testRoute.POST, { token: support, params: { id: "sub_test" }, body: {} }), 403],
    ] as const;
    for (const [r, status] of cases) expect(r.status, r.text).toBe(status);
    expect(receiver.received).toHaveLength(seen);
    expect(await writeCounts(db.pool)).toEqual(before);
  });
});
