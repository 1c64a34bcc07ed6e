// Signing secrets at rest: the column holds AES-256-GCM ciphertext; rotation
// adds a secret, retires the old one after an overlap, and is audited.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "./db";
import { call, tokenFor } from "./api";
import * as subs from "../app/api/v1/subscriptions/route";
import * as sub from "../app/api/v1/subscriptions/[id]/route";
import * as secrets from "../app/api/v1/subscriptions/[id]/secrets/route";
import { generateSecret, openSecret, sealSecret } from "../lib/subscriptions/secrets";

let db: TestDb;
let admin: string;
let engineer: string;
beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  engineer = await tokenFor(db.prisma, "engineer");
});
afterAll(async () => db?.close());

describe("sealSecret / openSecret", () => {
  it("round-trips, uses a fresh nonce every time, and refuses tampering", () => {
    const s = generateSecret();
    const a = sealSecret(s);
    const b = sealSecret(s);
    expect(a).not.toBe(b);
    expect(a).not.toContain("whsec_");
    expect(openSecret(a)).toBe(s);
    const [v, iv, tag, ct] = a.split(":");
    const flipped = Buffer.from(ct, "base64url");
    flipped[0] ^= 1;
    expect(() => openSecret([v, iv, tag, flipped.toString("base64url")].join(":"))).toThrow(/does not decrypt/);
  });
});

describe("secrets in the database", () => {
  it("the subscription_secrets column holds ciphertext that decrypts to the secret shown once at creation", async () => {
    const r = await call(subs.POST, { token: admin, body: { id: "sub_enc", name: "Lincoln", url: "https://lincoln.example.test/h", eventTypes: ["assignment.graded"] } });
    expect(r.status, r.text).toBe(201);
    const shown: string = r.json.secret;
    expect(shown).toMatch(/^whsec_/);
    const { rows } = await db.pool.query<{ secret: string }>("SELECT secret FROM subscription_secrets WHERE subscription_id = 'sub_enc'");
    expect(rows).toHaveLength(1);
    expect(rows[0].secret).not.toContain("whsec_");
    expect(rows[0].secret).not.toContain(shown.slice(6));
    expect(rows[0].secret).toMatch(/^v1:/);
    expect(openSecret(rows[0].secret)).toBe(shown);
    // A supplied secret is sealed too.
    const given = generateSecret();
    await call(subs.POST, { token: admin, body: { id: "sub_given", name: "J", url: "https://j.example.test/h", eventTypes: ["*"], secret: given } });
    const dump = (await db.pool.query<{ secret: string }>("SELECT secret FROM subscription_secrets")).rows.map((x) => x.secret).join("\n");
    expect(dump).not.toContain("whsec_");
    expect(dump).not.toContain(given.slice(6));
  });

  it("later answers never carry the secret", async () => {
    const got = await call(sub.GET, { token: admin, params: { id: "sub_enc" } });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain("whsec_");
    const list = await call(subs.GET, { token: admin });
    expect(list.text).not.toContain("whsec_");
    const meta = await call(secrets.GET, { token: admin, params: { id: "sub_enc" } });
    expect(meta.status).toBe(200);
    expect(meta.text).not.toContain("whsec_");
    expect(meta.json.items).toHaveLength(1);
  });
});

describe("POST /api/v1/subscriptions/:id/secrets (rotation)", () => {
  it("adds a secret, keeps the old one signing until the overlap ends, audits without the secret", async () => {
    const before = await db.prisma.subscriptionSecret.findFirstOrThrow({ where: { subscriptionId: "sub_enc" } });
    const t0 = Date.now();
    const r = await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { overlapSeconds: 3600, reason: "annual rotation" } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.secret).toMatch(/^whsec_/);
    expect(r.json.previous).toHaveLength(1);
    const rows = await db.prisma.subscriptionSecret.findMany({ where: { subscriptionId: "sub_enc" }, orderBy: { createdAt: "asc" } });
    expect(rows).toHaveLength(2);
    const old = rows.find((x) => x.id === before.id)!;
    const fresh = rows.find((x) => x.id === r.json.id)!;
    expect(old.expiresAt!.getTime()).toBeGreaterThanOrEqual(t0 + 3600_000 - 1000);
    expect(old.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect(fresh.expiresAt).toBeNull();
    expect(openSecret(fresh.secret)).toBe(r.json.secret);
    // Both are active now: the worker signs with both.
    const { rows: signing } = await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = 'sub_enc' AND (expires_at IS NULL OR expires_at > now())");
    expect(signing).toHaveLength(2);
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "subscription.secret.rotate", targetId: "sub_enc" } });
    expect(audit).toMatchObject({ actor: "token:test-admin", reason: "annual rotation" });
    expect(JSON.stringify(audit.details)).not.toContain("whsec_");
    expect((audit.details as { secretId: string }).secretId).toBe(r.json.id);
  });

  it("overlap 0 retires the old secrets at once; expired ones are removed on the next rotation", async () => {
    const r = await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { overlapSeconds: 0 } });
    expect(r.status).toBe(201);
    const { rows } = await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = 'sub_enc' AND (expires_at IS NULL OR expires_at > now())");
    expect(rows.map((x) => x.id)).toEqual([r.json.id]);
    await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: {} });
    expect(await db.prisma.subscriptionSecret.count({ where: { subscriptionId: "sub_enc" } })).toBe(2);
  });

  it("is admin-only, 404s an unknown subscription, 400s a bad secret or overlap", async () => {
    expect((await call(secrets.POST, { token: engineer, params: { id: "sub_enc" }, body: {} })).status).toBe(403);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_nope" }, body: {} })).status).toBe(404);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { secret: "hunter2" } })).status).toBe(400);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { overlapSeconds: 30 * 86400 } })).status).toBe(400);
  });
});
