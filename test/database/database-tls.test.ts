// DATABASE_URL with sslmode=require against a server whose certificate a
// private CA signed (a managed PostgreSQL's own CA, a self-signed Debian
// snakeoil): node-pg verifies it as verify-full does and refuses. The refusal
// names the database and the remedy (sslrootcert in DATABASE_URL) for
// `hookledger migrate`, `start` and every CLI command (migrate) and for a
// worker's wait for its database, instead of the bare "unable to verify the
// first certificate"; given the CA, it connects. The server here is a stand-in
// that answers PostgreSQL's SSLRequest and then only the TLS handshake.
import { execFile } from "node:child_process";
import net from "node:net";
import tls from "node:tls";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePki, type Pki } from "../helpers/endpoint-auth-helpers";
import { migrate } from "../../lib/db/migrate";
import { waitForDatabase } from "../../lib/db/wait";

let pki: Pki;
let server: net.Server;
let port = 0;
const handshakes: string[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-dbtls-"));

beforeAll(async () => {
  pki = makePki();
  server = net.createServer((socket) => {
    socket.once("data", () => {
      // The 8-byte SSLRequest: 'S' (go ahead), then TLS with a certificate only the test CA vouches for.
      socket.write("S");
      const secure = new tls.TLSSocket(socket, { isServer: true, cert: pki.serverCert, key: pki.serverKey });
      secure.on("secure", () => {
        handshakes.push("ok");
        secure.destroy(); // no PostgreSQL behind it: the handshake is all this checks
      });
      secure.on("error", () => handshakes.push("refused"));
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

const url = (query: string) => `postgres://hookledger:pw@127.0.0.1:${port}/hookledger?${query}`;
const EXPLAINED =
  /^the database server's TLS certificate could not be verified \(unable to verify the first certificate\)\. .*sslmode=verify-full&sslrootcert=\/path\/to\/ca\.pem/;

describe("a database whose certificate a private CA signed", () => {
  it("migrate says it is the database's certificate and how to trust its CA", async () => {
    await expect(migrate(url("sslmode=require"))).rejects.toThrow(EXPLAINED);
  });

  it("a worker's wait for its database fails at once with the same words, and does not wait", async () => {
    const started = Date.now();
    await expect(waitForDatabase(url("sslmode=require"), pino({ level: "silent" }))).rejects.toThrow(EXPLAINED);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("with sslrootcert naming the CA, the handshake succeeds (what fails next is this stand-in, not TLS)", async () => {
    const ca = path.join(dir, "ca.pem");
    fs.writeFileSync(ca, pki.ca);
    const before = handshakes.filter((h) => h === "ok").length;
    const err = await migrate(url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`)).catch((e: Error) => e);
    expect(String(err)).not.toMatch(/certificate/);
    expect(handshakes.filter((h) => h === "ok").length).toBe(before + 1);
  });

  it("the URL the refusal gives, followed as written, connects with no warning from the driver", async () => {
    // With sslmode=require kept, pg-connection-string prints a nine-line SECURITY WARNING in every process
    // (three on each `hookledger start`), so the remedy names the mode node-pg applies anyway.
    const refusal = String(await migrate(url("sslmode=require")).catch((e: Error) => e.message));
    const advised = /give DATABASE_URL (\S+)\/path\/to\/ca\.pem/.exec(refusal)?.[1];
    expect(advised, refusal).toBe("sslmode=verify-full&sslrootcert=");
    const ca = path.join(dir, "ca-cli.pem");
    fs.writeFileSync(ca, pki.ca);
    const before = handshakes.filter((h) => h === "ok").length;
    const root = path.resolve(import.meta.dirname, "../..");
    const env = { ...process.env, DATABASE_URL: url(`${advised}${ca}`) };
    const r = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "migrate"], { cwd: root, env, timeout: 60_000 }).catch((e: { stderr: string }) => e);
    expect(handshakes.filter((h) => h === "ok").length).toBe(before + 1);
    expect(r.stderr).not.toMatch(/SECURITY WARNING|certificate/);
  }, 90_000);
});
