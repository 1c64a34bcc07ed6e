// Signing secrets at rest: the column holds AES-256-GCM ciphertext; rotation
// adds a secret, retires the old one after an overlap, and is audited.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import * as secrets from "../../app/api/v1/subscriptions/[id]/secrets/route";
import { Webhook } from "standardwebhooks";
import { currentSecretsKeyId, generateSecret, openSecret, rekeySecrets, sealSecret } from "../../lib/subscriptions/secrets";
import { resetSecretKeyCache } from "../../lib/auth/keys";
import { createSub, seedEvents, settled, startReceiver, worker } from "../helpers/worker-helpers";

let db: TestDb;
let admin: string;
let support: string;
beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  support = await tokenFor(db.prisma, "support");
});
afterAll(async () => db?.close());

const ROW = { id: "sec_a", subscriptionId: "sub_a" };

describe("sealSecret / openSecret", () => {
  it("round-trips, uses a fresh nonce every time, and refuses tampering", () => {
    const s = generateSecret();
    const a = sealSecret(s, ROW);
    const b = sealSecret(s, ROW);
    expect(a).not.toBe(b);
    expect(a).not.toContain("whsec_");
    expect(a).toMatch(new RegExp(`^v2:${currentSecretsKeyId()}:`));
    expect(openSecret(a, ROW)).toBe(s);
    const [v, kid, iv, tag, ct] = a.split(":");
    const flipped = Buffer.from(ct, "base64url");
    flipped[0] ^= 1;
    expect(() => openSecret([v, kid, iv, tag, flipped.toString("base64url")].join(":"), ROW)).toThrow(/does not decrypt/);
  });

  it("a ciphertext moved to another row (another subscription, or another secret id) does not decrypt", () => {
    const a = sealSecret(generateSecret(), { id: "sec_1", subscriptionId: "sub_lincoln" });
    const b = sealSecret(generateSecret(), { id: "sec_2", subscriptionId: "sub_jefferson" });
    expect(() => openSecret(a, { id: "sec_2", subscriptionId: "sub_jefferson" })).toThrow(/altered, or copied from another row/);
    expect(() => openSecret(b, { id: "sec_1", subscriptionId: "sub_lincoln" })).toThrow(/altered, or copied from another row/);
    expect(() => openSecret(a, { id: "sec_1", subscriptionId: "sub_jefferson" })).toThrow(/does not decrypt/);
    expect(() => openSecret(a, { id: "sec_9", subscriptionId: "sub_lincoln" })).toThrow(/does not decrypt/);
  });

  it("a plaintext whsec_ value is never used to sign (no fallback)", () => {
    expect(() => openSecret(generateSecret(), ROW)).toThrow(/not in the encrypted v2 format.*secrets rekey/);
  });

  it("there is no built-in key: the test run's key comes from the environment", () => {
    expect(process.env.HOOKLEDGER_SECRET_KEY).toBeTruthy();
    const src = fs.readFileSync(path.join(__dirname, "../../lib/auth/keys.ts"), "utf8");
    expect(src).not.toMatch(/VITEST/);
    expect(src).not.toMatch(/update\("hookledger test/);
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
    expect(rows[0].secret).toMatch(/^v2:/);
    const row = await db.prisma.subscriptionSecret.findFirstOrThrow({ where: { subscriptionId: "sub_enc" } });
    expect(openSecret(rows[0].secret, row)).toBe(shown);
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
    expect(openSecret(fresh.secret, fresh)).toBe(r.json.secret);
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

  // Managers and up rotate (a district's manager re-keys its own endpoint);
  // ending an overlap early stays admin-only (test/delivery/rotation.test.ts).
  it("is refused below manager, 404s an unknown subscription, 400s a bad secret or overlap", async () => {
    expect((await call(secrets.POST, { token: support, params: { id: "sub_enc" }, body: {} })).status).toBe(403);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_nope" }, body: {} })).status).toBe(404);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { secret: "hunter2" } })).status).toBe(400);
    expect((await call(secrets.POST, { token: admin, params: { id: "sub_enc" }, body: { overlapSeconds: 30 * 86400 } })).status).toBe(400);
  });
});

describe("legacy rows and key rotation", () => {
  it("rekey converts plaintext and unbound v1 rows, and refuses to touch what it cannot open", async () => {
    const plain = generateSecret();
    await createSub(db.pool, { id: "sub_legacy", url: "https://legacy.example.test/h" });
    await db.pool.query("INSERT INTO subscription_secrets (id, subscription_id, secret) VALUES ('sec_legacy_plain', 'sub_legacy', $1)", [plain]);
    await db.pool.query("INSERT INTO subscription_secrets (id, subscription_id, secret) VALUES ('sec_legacy_junk', 'sub_legacy', 'v1:AAAA:BBBB:CCCC')");
    const r = await rekeySecrets(db.prisma);
    expect(r.converted).toBeGreaterThanOrEqual(1);
    expect(r.failed.map((f) => f.id)).toEqual(["sec_legacy_junk"]);
    const row = await db.prisma.subscriptionSecret.findUniqueOrThrow({ where: { id: "sec_legacy_plain" } });
    expect(row.secret).toMatch(/^v2:/);
    expect(openSecret(row.secret, row)).toBe(plain);
    await db.pool.query("DELETE FROM subscription_secrets WHERE id = 'sec_legacy_junk'");
    const again = await rekeySecrets(db.prisma);
    expect(again).toMatchObject({ resealed: 0, converted: 0, failed: [] });
  });

  it("rotating HOOKLEDGER_SECRET_KEY with `secrets rekey`: deliveries keep verifying at a real receiver before, during and after", async () => {
    const receiver = await startReceiver();
    const {
      secrets: [plain],
    } = await createSub(db.pool, { id: "sub_rekey", url: receiver.url + "/hooks" });
    const oldKey = process.env.HOOKLEDGER_SECRET_KEY!;
    const verifyAll = () => {
      for (const got of receiver.received)
        new Webhook(plain).verify(got.body, {
          "webhook-id": String(got.headers["webhook-id"]),
          "webhook-timestamp": String(got.headers["webhook-timestamp"]),
          "webhook-signature": String(got.headers["webhook-signature"]),
        });
    };
    const deliver = async (prefix: string) => {
      const w = worker(db.url);
      try {
        await seedEvents(db.pool, prefix, 3, ["sub_rekey"]);
        for (let i = 1; i <= 3; i++) expect((await settled(db.pool, "sub_rekey", `${prefix}${i}`)).state, `${prefix}${i}`).toBe("delivered");
      } finally {
        await w.stop();
      }
    };
    const useKeys = (current: string, previous?: string) => {
      process.env.HOOKLEDGER_SECRET_KEY = current;
      if (previous) process.env.HOOKLEDGER_SECRET_KEY_PREVIOUS = previous;
      else delete process.env.HOOKLEDGER_SECRET_KEY_PREVIOUS;
      resetSecretKeyCache();
    };
    try {
      await deliver("evt_rk_before_");
      const oldId = currentSecretsKeyId();
      const newKey = crypto.randomBytes(32).toString("base64");
      // During: every process has the new key and the old one as previous; the rows are still sealed under the old.
      useKeys(newKey, oldKey);
      expect(currentSecretsKeyId()).not.toBe(oldId);
      await deliver("evt_rk_during_");
      const r = await rekeySecrets(db.prisma);
      expect(r.failed).toEqual([]);
      expect(r.resealed).toBeGreaterThanOrEqual(1);
      // After: the old key is gone; every row opens under the new one alone.
      useKeys(newKey);
      const row = await db.prisma.subscriptionSecret.findFirstOrThrow({ where: { subscriptionId: "sub_rekey" } });
      expect(row.secret.split(":")[1]).toBe(currentSecretsKeyId());
      await deliver("evt_rk_after_");
      expect(receiver.received.length).toBeGreaterThanOrEqual(9);
      expect(verifyAll).not.toThrow();
      // Without the key a row was sealed with, it is refused, naming what to do.
      useKeys(oldKey);
      expect(() => openSecret(row.secret, row)).toThrow(/HOOKLEDGER_SECRET_KEY_PREVIOUS/);
    } finally {
      useKeys(oldKey);
      await receiver.close();
    }
  });
});
