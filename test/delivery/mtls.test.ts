// Mutual TLS against a real node:https receiver that demands a client
// certificate from a CA made for this test (openssl CLI): hookledger's
// certificate is accepted, a connection without one is refused, and a
// subscription without tls records a TLS error. A certificate or key that
// does not parse or does not match is a 400 that writes nothing.
import tls from "node:tls";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { attemptsOf, deliveryOf, seedEvents, settled, worker } from "../helpers/worker-helpers";
import { dumpDatabase, makePki, startHttpsReceiver, writeCounts, type HttpsReceiver, type Pki } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import { tlsProblems } from "../../lib/subscriptions/endpoint-auth";
import { generateSecret } from "../../lib/subscriptions/secrets";
import { Sender } from "../../lib/net/sender";
import type { DeliveryWorker } from "../../worker/worker";

let db: TestDb;
let manager: string;
let pki: Pki;
let receiver: HttpsReceiver;
let w: DeliveryWorker | undefined;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  pki = makePki();
  receiver = await startHttpsReceiver(pki);
});

afterAll(async () => {
  await w?.stop();
  await receiver?.close();
  await db?.close();
});

const keyBody = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, "");

describe("the https receiver", () => {
  it("refuses a connection without a client certificate and accepts one with hookledger's (checked without hookledger)", async () => {
    const port = Number(new URL(receiver.url).port);
    const handshake = (opts: tls.ConnectionOptions) =>
      new Promise<string>((resolve) => {
        const s = tls.connect({ host: "127.0.0.1", port, ca: pki.ca, ...opts }, () => {
          s.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        });
        let data = "";
        s.on("data", (d) => (data += d));
        s.on("error", (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
        s.on("close", () => resolve(data.split("\r\n")[0] || "closed"));
      });
    expect(await handshake({})).toMatch(/^error (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ECONNRESET)/);
    expect(await handshake({ cert: pki.clientCert, key: pki.clientKey })).toMatch(/^HTTP\/1.1 200/);
  });
});

describe("mutual TLS", () => {
  it("a subscription with tls presents its client certificate; one without gets a TLS error recorded", async () => {
    const created = await call(subs.POST, {
      token: manager,
      body: {
        id: "sub_mtls",
        name: "Lincoln gateway (mTLS)",
        url: receiver.url,
        eventTypes: ["assignment.graded"],
        tenant: "lincoln",
        tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey, ca: pki.ca },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.tls).toMatchObject({
      set: true,
      ca: true,
      subject: expect.stringContaining("CN=hookledger.lincoln.example"),
      issuer: "CN=Test District Root CA",
    });
    expect(new Date(created.json.tls.expiresAt).getTime()).toBeGreaterThan(Date.now());
    expect(created.text).not.toContain(keyBody(pki.clientKey).slice(0, 40));

    const plain = await call(subs.POST, {
      token: manager,
      body: {
        id: "sub_plain",
        name: "Lincoln gateway (no client cert)",
        url: receiver.url,
        eventTypes: ["assignment.graded"],
        tenant: "lincoln",
        retryPolicy: { ladderSeconds: [3600] },
      },
    });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.json.tls).toEqual({ set: false });

    const seen = receiver.received.length; // the handshake check above made one request
    w = worker(db.url);
    await seedEvents(db.pool, "evt_mtls_", 1, ["sub_mtls", "sub_plain"], "lincoln");
    const ok = await settled(db.pool, "sub_mtls", "evt_mtls_1");
    expect(ok.state).toBe("delivered");
    expect(receiver.received).toHaveLength(seen + 1);
    expect(receiver.received[seen].peerSubject).toBe("hookledger.lincoln.example");

    const failed = await (async () => {
      for (let i = 0; i < 200; i++) {
        const d = await deliveryOf(db.pool, "sub_plain", "evt_mtls_1");
        if (d && d.attempt_count > 0) return d;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("no attempt for sub_plain");
    })();
    const [attempt] = await attemptsOf(db.pool, failed.id);
    expect(attempt.error_class).toBe("tls");
    expect(attempt.status_code).toBeNull();
    expect(receiver.received).toHaveLength(seen + 1); // nothing reached the handler without a certificate

    // Neither the key nor the certificate's PEM is in the database in plain text.
    const dump = await dumpDatabase(db.pool);
    expect(dump).not.toContain(keyBody(pki.clientKey).slice(0, 40));
    expect(dump).not.toContain(keyBody(pki.clientCert).slice(0, 40));
  });

  it("tls: null clears the certificate", async () => {
    const r = await call(sub.PATCH, { token: manager, params: { id: "sub_mtls" }, body: { tls: null } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.tls).toEqual({ set: false });
    const { rows } = await db.pool.query("SELECT endpoint_tls, endpoint_tls_view FROM subscriptions WHERE id = 'sub_mtls'");
    expect(rows[0]).toEqual({ endpoint_tls: null, endpoint_tls_view: null });
    const { rows: audit } = await db.pool.query("SELECT details FROM audit_entries WHERE target_id = 'sub_mtls' AND action = 'subscription.update'");
    expect(audit[0].details.changed).toEqual(["tls"]);
    expect(audit[0].details.before.tls).toMatchObject({ set: true, subject: expect.stringContaining("hookledger.lincoln.example") });
  });
});

describe("a private CA without a client certificate", () => {
  it("tls: {ca} alone trusts the district's CA for an endpoint that asks for no client certificate", async () => {
    const privateCa = await startHttpsReceiver(pki, 200, { clientCertificate: false });
    try {
      const created = await call(subs.POST, {
        token: manager,
        body: { id: "sub_private_ca", name: "Lincoln (private CA)", url: privateCa.url, eventTypes: ["assignment.graded"], tenant: "lincoln", tls: { ca: pki.ca } },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.json.tls).toEqual({ set: true, subject: null, issuer: null, expiresAt: null, fingerprint256: null, ca: true });
      const untrusted = await call(subs.POST, {
        token: manager,
        body: {
          id: "sub_private_ca_untrusted",
          name: "Lincoln (CA not given)",
          url: privateCa.url,
          eventTypes: ["assignment.graded"],
          tenant: "lincoln",
          retryPolicy: { ladderSeconds: [3600] },
        },
      });
      expect(untrusted.status, untrusted.text).toBe(201);

      w ??= worker(db.url);
      await seedEvents(db.pool, "evt_private_ca_", 1, ["sub_private_ca", "sub_private_ca_untrusted"], "lincoln");
      const ok = await settled(db.pool, "sub_private_ca", "evt_private_ca_1");
      expect(ok.state).toBe("delivered");
      expect(privateCa.received).toHaveLength(1);
      expect(privateCa.received[0].peerSubject).toBeNull(); // no client certificate was presented

      for (let i = 0; i < 200 && !((await deliveryOf(db.pool, "sub_private_ca_untrusted", "evt_private_ca_1"))?.attempt_count > 0); i++)
        await new Promise((r) => setTimeout(r, 50));
      const [attempt] = await attemptsOf(db.pool, (await deliveryOf(db.pool, "sub_private_ca_untrusted", "evt_private_ca_1"))!.id);
      expect(attempt).toMatchObject({ error_class: "tls", status_code: null });
      expect(privateCa.received).toHaveLength(1);
    } finally {
      await privateCa.close();
    }
  });
});

describe("the sender's connections", () => {
  it("are never shared between certificates: a replaced certificate is presented on the very next request", async () => {
    const sender = new Sender({ allowPrivate: true });
    const send = (cert: string, key: string) =>
      sender.send({
        url: receiver.url,
        deliveryKey: "k",
        body: Buffer.from("{}"),
        secrets: [generateSecret()],
        tls: { id: createHash("sha256").update(cert).digest("hex"), cert, key, ca: pki.ca },
      });
    try {
      const seen = receiver.received.length;
      expect((await send(pki.clientCert, pki.clientKey)).statusCode).toBe(200);
      expect((await send(pki.otherCert, pki.otherKey)).statusCode).toBe(200);
      expect((await send(pki.clientCert, pki.clientKey)).statusCode).toBe(200);
      expect(receiver.received.slice(seen).map((r) => r.peerSubject)).toEqual(["hookledger.lincoln.example", "someone-else.example", "hookledger.lincoln.example"]);
    } finally {
      await sender.close();
    }
  });
});

describe("a certificate or key that does not parse or match is a 400 that writes nothing", () => {
  const cases: [string, () => Record<string, unknown>, RegExp][] = [
    ["a certificate that is not PEM", () => ({ clientCertificate: "hello", clientKey: pki.clientKey }), /clientCertificate is not a PEM certificate/],
    [
      "a certificate that does not parse",
      () => ({ clientCertificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", clientKey: pki.clientKey }),
      /clientCertificate does not parse/,
    ],
    [
      "a key that does not parse",
      () => ({ clientCertificate: pki.clientCert, clientKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }),
      /clientKey does not parse/,
    ],
    ["a key of another certificate", () => ({ clientCertificate: pki.clientCert, clientKey: pki.otherKey }), /clientKey does not match clientCertificate/],
    ["an encrypted key", () => ({ clientCertificate: pki.clientCert, clientKey: pki.encryptedKey }), /clientKey is encrypted/],
    ["a CA bundle without a certificate", () => ({ clientCertificate: pki.clientCert, clientKey: pki.clientKey, ca: "not a pem" }), /ca holds no PEM certificate/],
    [
      "a CA certificate that does not parse",
      () => ({ clientCertificate: pki.clientCert, clientKey: pki.clientKey, ca: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" }),
      /certificate 1 of ca does not parse/,
    ],
    ["a missing key", () => ({ clientCertificate: pki.clientCert }), /clientKey is required with clientCertificate/],
    ["a key without its certificate", () => ({ clientKey: pki.clientKey, ca: pki.ca }), /clientCertificate is required with clientKey/],
    ["nothing at all", () => ({}), /give clientCertificate and clientKey \(mutual TLS\), ca/],
    ["a CA alone that is not PEM", () => ({ ca: "not a pem" }), /ca holds no PEM certificate/],
    ["an unknown field", () => ({ clientCertificate: pki.clientCert, clientKey: pki.clientKey, passphrase: "x" }), /passphrase/],
  ];
  it.each(cases)("%s", async (_what, tlsBody, message) => {
    const before = await writeCounts(db.pool);
    const created = await call(subs.POST, {
      token: manager,
      body: { name: "Bad tls", url: receiver.url, eventTypes: ["assignment.graded"], tenant: "lincoln", tls: tlsBody() },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.text).toMatch(message);
    const patched = await call(sub.PATCH, { token: manager, params: { id: "sub_plain" }, body: { tls: tlsBody() } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.text).toMatch(message);
    expect(await writeCounts(db.pool)).toEqual(before);
  });

  it("a certificate on an http:// url: 400 on create, and on a PATCH that would make it so", async () => {
    const before = await writeCounts(db.pool);
    const httpUrl = receiver.url.replace("https:", "http:");
    const tlsBody = { clientCertificate: pki.clientCert, clientKey: pki.clientKey };
    const created = await call(subs.POST, {
      token: manager,
      body: { name: "http + tls", url: httpUrl, eventTypes: ["assignment.graded"], tenant: "lincoln", tls: tlsBody },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.json.error.message).toMatch(/client certificate or CA needs an https:\/\/ url/);
    const withTls = await call(sub.PATCH, { token: manager, params: { id: "sub_plain" }, body: { url: httpUrl, tls: tlsBody } });
    expect(withTls.status, withTls.text).toBe(400);
    expect(await writeCounts(db.pool)).toEqual(before);
    // sub_plain gets a certificate, then a PATCH of its url alone to http:// is refused too.
    expect((await call(sub.PATCH, { token: manager, params: { id: "sub_plain" }, body: { tls: tlsBody } })).status).toBe(200);
    const mid = await writeCounts(db.pool);
    const urlOnly = await call(sub.PATCH, { token: manager, params: { id: "sub_plain" }, body: { url: httpUrl } });
    expect(urlOnly.status, urlOnly.text).toBe(400);
    expect(await writeCounts(db.pool)).toEqual(mid);
  });

  it("an expired certificate is named as such", () => {
    const later = new Date(Date.now() + 10 * 86400_000);
    expect(tlsProblems({ clientCertificate: pki.clientCert, clientKey: pki.clientKey }, later)).toEqual([
      { path: "clientCertificate", message: expect.stringMatching(/^the client certificate expired on 20\d\d-/) },
    ]);
    expect(tlsProblems({ clientCertificate: pki.clientCert, clientKey: pki.clientKey, ca: pki.ca })).toEqual([]);
  });
});
