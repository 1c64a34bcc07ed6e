// The sign-in limit's address and the password-hash queue. X-Forwarded-For is
// whatever the client wrote unless a proxy the operator trusts
// (HOOKLEDGER_TRUSTED_PROXIES) added it, so the address counted is the direct
// peer's, which server.ts passes to the handlers after removing any copy the
// client sent; only a trusted peer's forwarding headers are read. Rotating
// X-Forwarded-For from anywhere else must not buy more than 5 guesses per
// address. And scrypt waits in a bounded queue: past it, 503 with Retry-After
// at once, with nothing recorded against the account.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { rawRequest, runServerTs, startServerTs, type ServerProcess } from "../helpers/server-process";
import { createUser } from "../../lib/auth/users";
import { handleSignIn } from "../../lib/auth/signin";
import { SIGN_IN_MAX_FAILURES, SIGN_IN_MAX_FAILURES_PER_ADDRESS, SIGN_IN_MAX_FAILURES_PER_EMAIL, beginSignInAttempt } from "../../lib/auth/rate-limit";
import { PASSWORD_HASH_QUEUE } from "../../lib/auth/password";
import { PEER_HEADER, clientAddress, parseTrustedProxies, trustPeerHeader } from "../../lib/auth/proxies";
import { checkSettings } from "../../lib/auth/startup";

// A short queue, so a handful of parallel sign-ins fills it.
vi.hoisted(() => {
  process.env.HOOKLEDGER_PASSWORD_HASH_QUEUE = "2";
  delete process.env.HOOKLEDGER_TRUSTED_PROXIES;
});

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  // What server.ts does at start: the peer header it sets is the socket's address.
  trustPeerHeader();
});
afterAll(async () => db?.close());

async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T> | T): Promise<T> {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(old))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

const SAME = { origin: "http://localhost", host: "localhost", "sec-fetch-site": "same-origin" };
const signIn = (email: string, password: string, headers: Record<string, string>) =>
  call(handleSignIn, { path: "/api/auth/signin", body: { email, password }, headers: { ...SAME, ...headers } });

describe("HOOKLEDGER_TRUSTED_PROXIES", () => {
  it("takes addresses and CIDRs separated by commas or spaces; anything else stops the start, naming the variable and the entry", async () => {
    const list = parseTrustedProxies("10.0.0.0/8, 192.168.1.7  ::1/128,fd00::/8");
    expect(["10.1.2.3", "192.168.1.7", "::1", "fd00::5"].map((a) => list.has(a))).toEqual([true, true, true, true]);
    expect(["11.0.0.1", "192.168.1.8", "::2", "203.0.113.1"].map((a) => list.has(a))).toEqual([false, false, false, false]);
    expect(parseTrustedProxies(undefined).has("127.0.0.1")).toBe(false);
    expect(parseTrustedProxies("  ").has("127.0.0.1")).toBe(false);
    for (const bad of ["10.0.0.0/33", "10.0.0/8", "proxy.internal", "::1/129", "10.0.0.0/8;", "1.2.3.4/-1", "1.2.3.4/", "*"])
      expect(() => parseTrustedProxies(bad), bad).toThrow(/HOOKLEDGER_TRUSTED_PROXIES/);
    await withEnv({ HOOKLEDGER_TRUSTED_PROXIES: "10.0.0.0/8, 10.0.0.0/33" }, () =>
      expect(checkSettings()).rejects.toThrow(/HOOKLEDGER_TRUSTED_PROXIES.*10\.0\.0\.0\/33/),
    );
  });

  it("the address counted is the direct peer's, unless the peer is a trusted proxy: then the nearest forwarded address that is not one", async () => {
    const addr = (peer: string | null, extra: Record<string, string> = {}) =>
      clientAddress(new Headers({ ...(peer ? { [PEER_HEADER]: peer } : {}), ...extra }), parseTrustedProxies("10.0.0.0/8 ::1"));
    expect(addr("203.0.113.9", { "x-forwarded-for": "1.2.3.4" })).toBe("203.0.113.9");
    expect(addr("203.0.113.9", { "x-real-ip": "1.2.3.4" })).toBe("203.0.113.9");
    expect(addr("::ffff:203.0.113.9", { "x-forwarded-for": "1.2.3.4" })).toBe("203.0.113.9");
    expect(addr("10.0.0.5", { "x-forwarded-for": "1.2.3.4" })).toBe("1.2.3.4");
    // The left of the list is the client's own claim; only what trusted hops appended counts.
    expect(addr("10.0.0.5", { "x-forwarded-for": "6.6.6.6, 1.2.3.4" })).toBe("1.2.3.4");
    expect(addr("10.0.0.5", { "x-forwarded-for": "6.6.6.6, 1.2.3.4, 10.0.0.9" })).toBe("1.2.3.4");
    expect(addr("::ffff:10.0.0.5", { "x-forwarded-for": "1.2.3.4:5555" })).toBe("1.2.3.4");
    expect(addr("::1", { "x-forwarded-for": "[2001:DB8::7]:443" })).toBe("2001:db8::7");
    expect(addr("10.0.0.5", { "x-real-ip": "1.2.3.4" })).toBe("1.2.3.4");
    expect(addr("10.0.0.5")).toBe("10.0.0.5");
    expect(addr("10.0.0.5", { "x-forwarded-for": "not-an-address" })).toBe("10.0.0.5");
    // No peer header: not served by server.ts, so no address is known (forwarded headers are never taken alone).
    expect(addr(null, { "x-forwarded-for": "1.2.3.4" })).toBeNull();
  });

  it(`rotating X-Forwarded-For from a peer that is not a trusted proxy buys nothing: ${SIGN_IN_MAX_FAILURES} failures, then 429`, async () => {
    await createUser(db.prisma, { email: "rotate@hq.example", role: "admin", password: "correct horse battery" });
    const statuses: number[] = [];
    for (let i = 0; i <= SIGN_IN_MAX_FAILURES; i++)
      statuses.push((await signIn("rotate@hq.example", `guess-${i}-xxxxxxx`, { [PEER_HEADER]: "198.51.100.20", "x-forwarded-for": `192.0.2.${i + 1}` })).status);
    expect(statuses).toEqual([...Array(SIGN_IN_MAX_FAILURES).fill(401), 429]);
    const rows = await db.prisma.signInAttempt.findMany({ where: { email: "rotate@hq.example" }, select: { ip: true } });
    expect(new Set(rows.map((r) => r.ip))).toEqual(new Set(["198.51.100.20"]));
  });

  it("behind a trusted proxy, each forwarded address is counted on its own", async () => {
    await createUser(db.prisma, { email: "proxied@hq.example", role: "admin", password: "correct horse battery" });
    await withEnv({ HOOKLEDGER_TRUSTED_PROXIES: "10.0.0.0/8" }, async () => {
      for (let i = 0; i <= SIGN_IN_MAX_FAILURES; i++)
        expect((await signIn("proxied@hq.example", `guess-${i}-xxxxxxx`, { [PEER_HEADER]: "10.0.0.5", "x-forwarded-for": `192.0.2.${i + 1}` })).status).toBe(401);
      expect((await signIn("proxied@hq.example", "correct horse battery", { [PEER_HEADER]: "10.0.0.5", "x-forwarded-for": "192.0.2.99" })).status).toBe(200);
    });
    const rows = await db.prisma.signInAttempt.findMany({ where: { email: "proxied@hq.example" }, select: { ip: true } });
    expect(rows.map((r) => r.ip).sort()).toEqual(Array.from({ length: SIGN_IN_MAX_FAILURES + 1 }, (_, i) => `192.0.2.${i + 1}`).sort());
  });
});

describe("an unknown address (not served by server.ts: plain `next start`)", () => {
  it("is never counted as one shared address, so strangers cannot lock everyone out; the per-email cap still holds", async () => {
    for (let i = 0; i < SIGN_IN_MAX_FAILURES_PER_ADDRESS + 5; i++) await beginSignInAttempt(db.prisma, `stranger-${i}@flood.example`, null);
    for (let i = 0; i < SIGN_IN_MAX_FAILURES_PER_EMAIL; i++) await beginSignInAttempt(db.prisma, "unknown@hq.example", null);
    await expect(beginSignInAttempt(db.prisma, "unknown@hq.example", null)).rejects.toMatchObject({ code: "rate_limited" });
    await expect(beginSignInAttempt(db.prisma, "someone-else@hq.example", null)).resolves.toBeTruthy();
  });
});

describe("the password-hash queue", () => {
  it(`holds at most ${PASSWORD_HASH_QUEUE} waiting hashes: past that a sign-in is 503 with Retry-After at once, and not counted as a failure`, async () => {
    await createUser(db.prisma, { email: "queue@hq.example", role: "admin", password: "correct horse battery" });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn("queue@hq.example", `guess-${i}-xxxxxxx`, { [PEER_HEADER]: `198.51.100.${100 + i}` })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    const busy = results.filter((r) => r.status === 503);
    // Two hashing and two waiting at most while all twelve arrive together.
    expect(busy.length, statuses.join(",")).toBeGreaterThanOrEqual(12 - 2 - PASSWORD_HASH_QUEUE - 2);
    for (const r of busy) {
      expect(r.json.error.code).toBe("unavailable");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(await db.prisma.signInAttempt.count({ where: { email: "queue@hq.example" } })).toBe(statuses.filter((s) => s === 401).length);
    // Once the queue has drained, the right password signs in.
    expect((await signIn("queue@hq.example", "correct horse battery", { [PEER_HEADER]: "198.51.100.200" })).status).toBe(200);
  });
});

describe("through server.ts", () => {
  let direct: ServerProcess;
  let proxied: ServerProcess;
  beforeAll(async () => {
    await createUser(db.prisma, { email: "server@hq.example", role: "admin", password: "correct horse battery" });
    await createUser(db.prisma, { email: "server-proxied@hq.example", role: "admin", password: "correct horse battery" });
    // Every interface, as `hookledger start` listens by default; and loopback with loopback trusted (a local TLS proxy).
    [direct, proxied] = await Promise.all([
      startServerTs({ databaseUrl: db.url }),
      startServerTs({ databaseUrl: db.url, host: "127.0.0.1", env: { HOOKLEDGER_TRUSTED_PROXIES: "127.0.0.1/32" } }),
    ]);
  }, 180_000);
  afterAll(() => {
    direct?.stop();
    proxied?.stop();
  });

  const post = (s: ServerProcess, email: string, password: string, headers: Record<string, string>) =>
    rawRequest(s.port, {
      method: "POST",
      path: "/api/auth/signin",
      headers: { host: `localhost:${s.port}`, origin: `http://localhost:${s.port}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ email, password }),
    });

  it(`a client rotating X-Forwarded-For (and sending its own ${PEER_HEADER}) gets ${SIGN_IN_MAX_FAILURES} failures, then 429`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= SIGN_IN_MAX_FAILURES; i++)
      statuses.push(
        (
          await post(direct, "server@hq.example", `guess-${i}-xxxxxxx`, {
            "x-forwarded-for": `192.0.2.${i + 1}`,
            "x-real-ip": `192.0.2.${i + 1}`,
            [PEER_HEADER]: `203.0.113.${i + 1}`,
          })
        ).status,
      );
    expect(statuses).toEqual([...Array(SIGN_IN_MAX_FAILURES).fill(401), 429]);
    const rows = await db.prisma.signInAttempt.findMany({ where: { email: "server@hq.example" }, select: { ip: true } });
    expect(rows.length).toBe(SIGN_IN_MAX_FAILURES);
    for (const r of rows) expect(r.ip).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it("behind a proxy listed in HOOKLEDGER_TRUSTED_PROXIES, its X-Forwarded-For names the client", async () => {
    for (let i = 0; i <= SIGN_IN_MAX_FAILURES; i++)
      expect((await post(proxied, "server-proxied@hq.example", `guess-${i}-xxxxxxx`, { "x-forwarded-for": `6.6.6.6, 192.0.2.${i + 1}` })).status).toBe(401);
    const rows = await db.prisma.signInAttempt.findMany({ where: { email: "server-proxied@hq.example" }, select: { ip: true } });
    expect(rows.map((r) => r.ip).sort()).toEqual(Array.from({ length: SIGN_IN_MAX_FAILURES + 1 }, (_, i) => `192.0.2.${i + 1}`).sort());
  });

  it("a malformed HOOKLEDGER_TRUSTED_PROXIES stops server.ts before it listens, naming the variable", async () => {
    const r = await runServerTs({ DATABASE_URL: db.url, HOOKLEDGER_TRUSTED_PROXIES: "10.0.0.0/8 proxy.internal" }, 30_000);
    expect(r.code, r.output).toBe(1);
    expect(r.output).toMatch(/HOOKLEDGER_TRUSTED_PROXIES.*proxy\.internal/);
    expect(r.output).not.toMatch(/listening on/);
  });
});
