// The HTTP sender on its own, against real local servers: what it reports for
// a hang, for a request that never left the queue, at shutdown, and for an
// answer larger than it keeps. (The worker's sequences are test/worker-retry.)
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXCERPT_BYTES, Sender, caBundle } from "../../lib/net/sender";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { rootCertificates } from "node:tls";

let server: http.Server;
let base = "";
const seen: string[] = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers["webhook-id"]}`);
    req.resume();
    if (req.url === "/hang") return; // never answers
    if (req.url === "/big") {
      res.writeHead(500, { "content-type": "text/plain", "retry-after": "7" });
      res.end("é".repeat(300_000)); // 600 KB, past what the sender reads
      return;
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const req = (path: string, key: string, timeoutMs = 300) => ({ url: `${base}${path}`, deliveryKey: key, body: Buffer.from("{}"), secrets: [], timeoutMs });

describe("Sender", () => {
  it("a hang is an ambiguous timeout; a request still queued for the one connection times out unsent and never reaches the endpoint", async () => {
    const sender = new Sender({ allowPrivate: true, connectionsPerOrigin: 1 });
    try {
      // The queued request's deadline comes well before the first one's, so it is certainly still
      // waiting for the only connection when it expires (equal deadlines raced on a loaded CI box:
      // the first abort freed the connection and the second request went out before its own timer).
      const [onWire, queued] = await Promise.all([sender.send(req("/hang", "k-wire", 1_500)), sender.send(req("/hang", "k-queued", 200))]);
      expect(onWire).toMatchObject({ outcome: "error", errorClass: "timeout", ambiguous: true, statusCode: null });
      expect(queued).toMatchObject({ outcome: "error", errorClass: "timeout", ambiguous: false, statusCode: null });
      expect(queued.errorMessage).toMatch(/not sent/);
      expect(queued.durationMs).toBeLessThan(2_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.filter((s) => s.startsWith("/hang"))).toEqual(["/hang k-wire"]);
    } finally {
      await sender.close();
    }
  });

  it("an https endpoint that accepts the connection and never finishes the TLS handshake: a connect timeout, not 'no connection free'", async () => {
    // Accepts TCP, reads the ClientHello, answers nothing (a wedged TLS terminator, a port speaking something else).
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket.resume()));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const sender = new Sender({ allowPrivate: true });
    try {
      const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
      const r = await sender.send({ url, deliveryKey: "k-handshake", body: Buffer.from("{}"), secrets: [], timeoutMs: 300 });
      expect(r).toMatchObject({ outcome: "error", errorClass: "connect_timeout", ambiguous: false, statusCode: null });
      expect(r.errorMessage).toBe("The connection to the endpoint (TCP connect or TLS handshake) did not complete within 300 ms; the request was not sent.");
    } finally {
      for (const socket of sockets) socket.destroy();
      await sender.close();
      await new Promise((r) => silent.close(r));
    }
  });

  it("abortAll ends what is in flight as shutdown, marked ambiguous when it was on the wire", async () => {
    const sender = new Sender({ allowPrivate: true });
    try {
      const pending = sender.send(req("/hang", "k-shutdown", 10_000));
      await new Promise((r) => setTimeout(r, 200));
      sender.abortAll();
      expect(await pending).toMatchObject({ outcome: "error", errorClass: "shutdown", ambiguous: true });
    } finally {
      await sender.close();
    }
  });

  it("an answer past the read limit keeps its status, headers and a 4 KB excerpt cut at a character boundary", async () => {
    const sender = new Sender({ allowPrivate: true });
    try {
      const r = await sender.send(req("/big", "k-big", 5_000));
      expect(r).toMatchObject({ outcome: "response", statusCode: 500, retryAfter: "7", ambiguous: false });
      expect(r.responseHeaders?.["content-type"]).toBe("text/plain");
      expect(Buffer.byteLength(r.responseExcerpt!)).toBeLessThanOrEqual(EXCERPT_BYTES);
      expect(r.responseExcerpt).toMatch(/^(é)+$/);
      expect(r.responseExcerpt!.length).toBe(EXCERPT_BYTES / 2);
      // The connection was dropped, not drained: the next request still goes out.
      expect(await sender.send(req("/ok", "k-after"))).toMatchObject({ statusCode: 204 });
    } finally {
      await sender.close();
    }
  });

  it("a subscription's CA is trusted beside the public roots and the operator's NODE_EXTRA_CA_CERTS, not instead of them", () => {
    const pem = (n: string) => `-----BEGIN CERTIFICATE-----\n${n}\n-----END CERTIFICATE-----`;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "hl-extra-ca-")), "extra.pem");
    fs.writeFileSync(file, `${pem("QUFB")}\n# a comment between\n${pem("QkJC")}\n`);
    expect(caBundle(pem("RElT"), file)).toEqual([...rootCertificates, pem("QUFB"), pem("QkJC"), pem("RElT")]);
    expect(caBundle(pem("RElT"), "")).toEqual([...rootCertificates, pem("RElT")]);
    expect(caBundle(pem("RElT"), path.join(os.tmpdir(), "hl-no-such-file.pem"))).toEqual([...rootCertificates, pem("RElT")]);
  });
});
