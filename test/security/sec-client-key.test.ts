// A client key the worker must never be handed: one that makes every
// handshake expensive (RSA over 4096 bits), or of a kind TLS peers commonly
// refuse. A 400 naming what is accepted, that writes nothing.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { writeCounts } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import { ZEndpointTls, tlsProblems } from "../../lib/subscriptions/endpoint-auth";

let db: TestDb;
let manager: string;
beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
});
afterAll(async () => db?.close());

type KeySpec = { label: string; gen: () => { privateKey: KeyObject } };
const rsa = (bits: number): KeySpec => ({ label: `RSA-${bits}`, gen: () => generateKeyPairSync("rsa", { modulusLength: bits }) });
const ec = (curve: string): KeySpec => ({ label: `EC ${curve}`, gen: () => generateKeyPairSync("ec", { namedCurve: curve }) });

/** A key from node:crypto and a self-signed certificate for it (openssl), so key and certificate match. */
function keyAndCert(spec: KeySpec): { clientKey: string; clientCertificate: string } {
  const privateKey = spec.gen().privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-key-"));
  try {
    fs.writeFileSync(path.join(dir, "k.pem"), privateKey);
    execFileSync("openssl", ["req", "-x509", "-key", "k.pem", "-out", "c.pem", "-days", "2", "-subj", "/CN=district.example"], { cwd: dir, stdio: "pipe" });
    return { clientKey: privateKey, clientCertificate: fs.readFileSync(path.join(dir, "c.pem"), "utf8") };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ACCEPTED_MSG = /accepted: RSA up to 4096 bits, EC P-256 or P-384, or Ed25519/;
const accepted: KeySpec[] = [rsa(2048), rsa(4096), ec("prime256v1"), ec("secp384r1"), { label: "Ed25519", gen: () => generateKeyPairSync("ed25519") }];
const refused: [KeySpec, RegExp][] = [
  [rsa(4160), /RSA key of 4160 bits/],
  [ec("secp521r1"), /EC key on curve secp521r1/],
  [ec("secp256k1"), /EC key on curve secp256k1/],
  [{ label: "Ed448", gen: () => generateKeyPairSync("ed448") }, /type ed448/],
  [{ label: "DSA", gen: () => generateKeyPairSync("dsa", { modulusLength: 2048, divisorLength: 256 }) }, /type dsa/],
];

describe("client key type and size", () => {
  it.each(accepted.map((s) => [s.label, s] as const))("%s with its certificate is accepted", (_l, spec) => {
    const t = keyAndCert(spec);
    expect(tlsProblems(t)).toEqual([]);
    expect(ZEndpointTls.safeParse(t).success).toBe(true);
  });

  it.each(refused.map(([s, m]) => [s.label, s, m] as const))("%s is refused, naming what is accepted", (_l, spec, what) => {
    const t = keyAndCert(spec);
    const problems = tlsProblems(t);
    expect(problems.map((p) => p.path)).toEqual(["clientKey"]);
    expect(problems[0].message).toMatch(what);
    expect(problems[0].message).toMatch(ACCEPTED_MSG);
  });

  it("through the API: an RSA key over 4096 bits is a 400 naming the accepted keys, on create and update, and writes nothing", async () => {
    const tls = keyAndCert(rsa(4160));
    const before = await writeCounts(db.pool);
    const created = await call(subs.POST, {
      token: manager,
      body: { name: "Big key", url: "https://big-key.example.test/h", eventTypes: ["assignment.graded"], tls },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.text).toMatch(ACCEPTED_MSG);
    const patched = await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_lincoln" }, body: { url: "https://lincoln.example.test/h", tls } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.text).toMatch(ACCEPTED_MSG);
    expect(await writeCounts(db.pool)).toEqual(before);
  });
});
