// Sign-in under attack: parallel guesses, floods of fresh emails, and the
// scrypt parameters (with old hashes upgraded at the next sign-in).
import { randomBytes, scryptSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createUser } from "../../lib/auth/users";
import { handleSignIn } from "../../lib/auth/signin";
import { SIGN_IN_MAX_FAILURES, SIGN_IN_MAX_FAILURES_PER_ADDRESS } from "../../lib/auth/rate-limit";
import { verifyPassword } from "../../lib/auth/password";
import { PEER_HEADER, trustPeerHeader } from "../../lib/auth/proxies";

// A small per-address cap, so the flood below needs few (slow, N=2^17) password checks.
vi.hoisted(() => {
  process.env.HOOKLEDGER_SIGNIN_MAX_FAILURES_PER_ADDRESS = "8";
});

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  // The client's address, as server.ts passes it to the handlers (lib/auth/proxies.ts).
  trustPeerHeader();
});
afterAll(async () => db?.close());

const signIn = (body: unknown, ip: string) =>
  call(handleSignIn, { path: "/api/auth/signin", body, headers: { origin: "http://localhost", host: "localhost", [PEER_HEADER]: ip } });

describe("sign-in rate limit under concurrency", () => {
  it(`a burst of 25 parallel wrong guesses gets at most ${SIGN_IN_MAX_FAILURES} password checks; the rest are 429`, async () => {
    await createUser(db.prisma, { email: "burst@hq.example", role: "admin", password: "correct horse battery" });
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => signIn({ email: "burst@hq.example", password: `guess-${i}-xxxxxxxx` }, "203.0.113.50")));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(",")).toBeLessThanOrEqual(SIGN_IN_MAX_FAILURES);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(25 - SIGN_IN_MAX_FAILURES);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // Every checked guess is on record; refused ones were withdrawn (they cost no scrypt).
    expect(await db.prisma.signInAttempt.count({ where: { email: "burst@hq.example" } })).toBe(statuses.filter((s) => s === 401).length);
  });

  it(`a flood of fresh emails from one address is refused after ${SIGN_IN_MAX_FAILURES_PER_ADDRESS} failures, before any scrypt`, async () => {
    for (let i = 0; i < SIGN_IN_MAX_FAILURES_PER_ADDRESS; i++)
      expect((await signIn({ email: `fresh-${i}@flood.example`, password: "whatever-password" }, "198.51.100.77")).status).toBe(401);
    const t0 = Date.now();
    const limited = await signIn({ email: "one-more@flood.example", password: "whatever-password" }, "198.51.100.77");
    expect(limited.status).toBe(429);
    expect(limited.json.error.message).toMatch(/from this address/);
    // No scrypt (hundreds of ms at N=2^17) was spent on the refused attempt.
    expect(Date.now() - t0).toBeLessThan(150);
    // Another address is not affected.
    expect((await signIn({ email: "one-more@flood.example", password: "whatever-password" }, "198.51.100.78")).status).toBe(401);
  });
});

describe("scrypt parameters", () => {
  it("new hashes use N=2^17, r=8, p=1", async () => {
    const u = await createUser(db.prisma, { email: "params@hq.example", role: "support", password: "correct horse battery" });
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } });
    expect(row.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
  });

  it("an old N=2^15 hash still signs in and is replaced by a 2^17 hash at that sign-in", async () => {
    const u = await createUser(db.prisma, { email: "legacy@hq.example", role: "support", password: "correct horse battery" });
    const salt = randomBytes(16);
    const old = scryptSync("correct horse battery", salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const legacy = `scrypt$32768$8$1$${salt.toString("base64")}$${old.toString("base64")}`;
    await db.prisma.user.update({ where: { id: u.id }, data: { passwordHash: legacy } });
    const r = await signIn({ email: "legacy@hq.example", password: "correct horse battery" }, "192.0.2.60");
    expect(r.status, r.text).toBe(200);
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: u.id } });
    expect(row.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword("correct horse battery", row.passwordHash)).toBe(true);
  });
});
