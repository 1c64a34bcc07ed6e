// Endpoint headers and the client certificate are credentials for one
// endpoint. A PATCH that moves the URL to another origin (scheme, host, port)
// must restate them (or drop them with null) in the same request; otherwise a
// 400 endpoint_auth_must_be_restated that writes nothing, so a manager cannot
// point the subscription at a host they control and collect the district's
// Authorization value on the next send. Through the real route handlers, on a
// real Postgres.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { makePki, writeCounts, type Pki } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";

let db: TestDb;
let manager: string;
let pki: Pki;
const AUTH = { Authorization: "Bearer district-credential-0123456789" };
const URL0 = "https://gateway.lincoln.example.test/hooks";

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  pki = makePki();
});
afterAll(async () => db?.close());

async function create(id: string, extra: Record<string, unknown>) {
  const r = await call(subs.POST, { token: manager, body: { id, name: id, url: URL0, eventTypes: ["assignment.graded"], tenant: "lincoln", ...extra } });
  expect(r.status, r.text).toBe(201);
}
const patch = (id: string, body: Record<string, unknown>) => call(sub.PATCH, { method: "PATCH", token: manager, params: { id }, body });
const row = async (id: string) => (await db.pool.query(`SELECT url, endpoint_headers, endpoint_tls, updated_at FROM subscriptions WHERE id = $1`, [id])).rows[0];

describe("a change of the URL's origin needs the endpoint credentials restated", () => {
  it("another host or port without restating stored headers and certificate: 400 naming what to restate, nothing written", async () => {
    await create("sub_both", { headers: AUTH, tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey } });
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["another host", { url: "https://collector.attacker.example.test/hooks" }, ["headers", "tls"]],
      ["another port", { url: "https://gateway.lincoln.example.test:8443/hooks" }, ["headers", "tls"]],
      ["headers restated, tls not", { url: "https://other.example.test/h", headers: AUTH }, ["tls"]],
      ["tls dropped, headers not", { url: "https://other.example.test/h", tls: null }, ["headers"]],
      ["with other changes in the same request", { url: "https://other.example.test/h", name: "renamed", state: "paused" }, ["headers", "tls"]],
    ];
    for (const [what, body, missing] of cases) {
      const before = await writeCounts(db.pool);
      const rowBefore = await row("sub_both");
      const r = await patch("sub_both", body);
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(r.json.error.code, what).toBe("endpoint_auth_must_be_restated");
      expect(r.json.error.details.map((d: { path: string }) => d.path)).toEqual(missing.map((m) => `body.${m}`));
      for (const m of missing) expect(r.json.error.message).toContain(m);
      expect(r.text).not.toContain("district-credential");
      expect(await writeCounts(db.pool), what).toEqual(before);
      expect(await row("sub_both"), what).toEqual(rowBefore);
    }
  });

  it("the same origin (another path or query) needs nothing restated", async () => {
    const r = await patch("sub_both", { url: "https://gateway.lincoln.example.test/v2/hooks?x=1" });
    expect(r.status, r.text).toBe(200);
    expect((await row("sub_both")).endpoint_headers).not.toBeNull();
  });

  it("another origin with headers and tls given again, or set to null, is accepted", async () => {
    const r1 = await patch("sub_both", {
      url: "https://new-gateway.lincoln.example.test/hooks",
      headers: { Authorization: "Bearer new-gateway-credential-999" },
      tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey },
    });
    expect(r1.status, r1.text).toBe(200);
    expect(r1.json.url).toBe("https://new-gateway.lincoln.example.test/hooks");
    const r2 = await patch("sub_both", { url: "https://elsewhere.example.test/hooks", headers: null, tls: null });
    expect(r2.status, r2.text).toBe(200);
    const after = await row("sub_both");
    expect(after.endpoint_headers).toBeNull();
    expect(after.endpoint_tls).toBeNull();
  });

  it("only what is stored must be restated: headers alone, or nothing at all", async () => {
    await create("sub_headers", { headers: AUTH });
    const refused = await patch("sub_headers", { url: "https://gateway.lincoln.example.test:9443/hooks" });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.details).toEqual([{ path: "body.headers", message: expect.any(String) }]);
    expect((await patch("sub_headers", { url: "https://b.example.test/hooks", headers: AUTH })).status).toBe(200);

    await create("sub_plain", {});
    expect((await patch("sub_plain", { url: "https://anywhere.example.test/hooks" })).status).toBe(200);
  });
});
