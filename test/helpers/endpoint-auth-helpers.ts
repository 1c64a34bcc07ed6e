// Shared by test/delivery/endpoint-auth.test.ts, test/delivery/mtls.test.ts, test/delivery/test-send.test.ts
// and test/security/https-default.test.ts: a throwaway PKI made with the openssl CLI,
// an https receiver that demands a client certificate, a database dump to
// grep for credentials, and the row counts a refused request must not change.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { expect } from "vitest";
import type { Received } from "./worker-helpers";

export type Pki = {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second client certificate and key from the same CA (a key that matches another certificate). */
  otherCert: string;
  otherKey: string;
  /** clientKey encrypted with a passphrase. */
  encryptedKey: string;
};

/** A CA, a server certificate for 127.0.0.1 and client certificates, generated with the openssl CLI in a temporary folder. */
export function makePki(): Pki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-pki-"));
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  ssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=Test District Root CA");
  fs.writeFileSync(path.join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  fs.writeFileSync(path.join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  const issue = (name: string, subj: string, ext: string, days = "2") => {
    ssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subj);
    ssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", days, "-extfile", ext);
  };
  issue("server", "/CN=localhost", "server.ext");
  issue("client", "/O=Lincoln Unified/CN=hookledger.lincoln.example", "client.ext");
  issue("other", "/CN=someone-else.example", "client.ext");
  ssl("pkey", "-in", "client.key", "-out", "client-enc.key", "-aes256", "-passout", "pass:district");
  const read = (f: string) => fs.readFileSync(path.join(dir, f), "utf8");
  const pki = {
    ca: read("ca.crt"),
    serverCert: read("server.crt"),
    serverKey: read("server.key"),
    clientCert: read("client.crt"),
    clientKey: read("client.key"),
    otherCert: read("other.crt"),
    otherKey: read("other.key"),
    encryptedKey: read("client-enc.key"),
  };
  fs.rmSync(dir, { recursive: true, force: true });
  return pki;
}

export type HttpsReceiver = {
  url: string;
  received: (Received & { peerSubject: string | null })[];
  /** TLS handshakes the server refused (e.g. no client certificate). */
  refused: string[];
  close: () => Promise<void>;
};

/**
 * An https receiver on 127.0.0.1 whose certificate the test CA signed, and that requires a client certificate
 * signed by it (requestCert, rejectUnauthorized) unless `clientCertificate: false`.
 */
export async function startHttpsReceiver(pki: Pki, status = 200, opts: { clientCertificate?: boolean } = {}): Promise<HttpsReceiver> {
  const received: HttpsReceiver["received"] = [];
  const refused: string[] = [];
  const mtls = opts.clientCertificate !== false;
  const server = https.createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: mtls, rejectUnauthorized: mtls }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const peer = (req.socket as import("node:tls").TLSSocket).getPeerCertificate();
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
        id: String(req.headers["webhook-id"] ?? ""),
        peerSubject: peer?.subject?.CN ? String(peer.subject.CN) : null,
      });
      res.writeHead(status, { "content-type": "application/json", "x-district-gateway": "lincoln-gw-1" });
      res.end(JSON.stringify({ ok: true, by: "lincoln gateway" }));
    });
  });
  server.on("tlsClientError", (err) => refused.push((err as NodeJS.ErrnoException).code ?? err.message));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    received,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every text, bytea, json and array column of every table, as text, concatenated: what a database dump would show. */
export async function dumpDatabase(pool: pg.Pool): Promise<string> {
  const { rows: cols } = await pool.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema = 'public' AND c.data_type IN ('text', 'character varying', 'bytea', 'jsonb', 'json', 'ARRAY')`,
  );
  expect(cols.length).toBeGreaterThan(20);
  const parts: string[] = [];
  for (const c of cols) {
    const { rows } = await pool.query<{ v: string | null }>(
      // bytea as escaped text: printable bytes stay as they are, so a plaintext copy would show.
      `SELECT ${c.data_type === "bytea" ? `encode("${c.column_name}", 'escape')` : `"${c.column_name}"::text`} AS v FROM "${c.table_name}"`,
    );
    for (const r of rows) if (r.v) parts.push(`${c.table_name}.${c.column_name}: ${r.v}`);
  }
  return parts.join("\n");
}

/** The row counts a refused request must leave as they were. */
export async function writeCounts(pool: pg.Pool): Promise<Record<string, unknown>> {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*) FROM subscriptions)::int AS subscriptions,
            (SELECT count(*) FROM subscription_secrets)::int AS secrets,
            (SELECT count(*) FROM audit_entries)::int AS audit,
            (SELECT count(*) FROM test_sends)::int AS test_sends,
            (SELECT count(*) FROM attempts)::int AS attempts,
            (SELECT coalesce(string_agg(id || '|' || updated_at::text || '|' || url || '|' || coalesce(endpoint_headers, '') || '|' || coalesce(endpoint_tls, ''), ',' ORDER BY id), '') FROM subscriptions) AS subs`,
  );
  return rows[0];
}
