// GET /api/health: database, migrations, and the newest worker heartbeat.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import * as health from "../../app/api/health/route";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  // The details need the operator's token (lib/metrics/token.ts); the generic answer is tested below.
  process.env.HOOKLEDGER_METRICS_TOKEN = "ops-token";
});
const OPS = { authorization: "Bearer ops-token" };
afterAll(async () => db?.close());

async function beat(workerId: string, secondsAgo: number, stopped = false) {
  await db.pool.query(
    `INSERT INTO worker_heartbeats (worker_id, hostname, pid, beat_at, stopped_at)
     VALUES ($1, 'host', 1, now() - make_interval(secs => $2), CASE WHEN $3 THEN now() END)
     ON CONFLICT (worker_id) DO UPDATE SET beat_at = excluded.beat_at, stopped_at = excluded.stopped_at`,
    [workerId, secondsAgo, stopped],
  );
}

describe("GET /api/health", () => {
  it("503 when no worker has ever beaten; ?scope=db is 200 (the database alone is fine)", async () => {
    const r = await call(health.GET, { path: "/api/health", headers: OPS });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({
      ok: false,
      reason: "no worker heartbeat",
      db: { ok: true },
      worker: { ok: false, alive: 0, newestBeatAgeSeconds: null, maxAgeSeconds: 30 },
    });
    const dbOnly = await call(health.GET, { path: "/api/health?scope=db", headers: OPS });
    expect(dbOnly.status).toBe(200);
    expect(dbOnly.json.db).toEqual({ ok: true });
  });

  it("503 when the newest heartbeat is older than the threshold, or its worker stopped", async () => {
    await beat("w-old", 45);
    await beat("w-stopped", 1, true);
    const r = await call(health.GET, { path: "/api/health", headers: OPS });
    expect(r.status).toBe(503);
    expect(r.json.worker.ok).toBe(false);
    expect(r.json.worker.alive).toBe(0);
    expect(r.json.worker.newestBeatAgeSeconds).toBeGreaterThanOrEqual(45);
  });

  it("200 with a fresh heartbeat", async () => {
    await beat("w-fresh", 2);
    const r = await call(health.GET, { path: "/api/health", headers: OPS });
    expect(r.status, r.text).toBe(200);
    expect(r.json.db).toEqual({ ok: true });
    expect(r.json.worker).toMatchObject({ ok: true, alive: 1, maxAgeSeconds: 30 });
    expect(r.json.worker.newestBeatAgeSeconds).toBeLessThan(5);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE moves the threshold; a bad value says what to do", async () => {
    await beat("w-fresh", 20);
    process.env.HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE = "10";
    try {
      const r = await call(health.GET, { path: "/api/health", headers: OPS });
      expect(r.status).toBe(503);
      expect(r.json.worker.maxAgeSeconds).toBe(10);
      process.env.HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE = "soon";
      const bad = await call(health.GET, { path: "/api/health", headers: OPS });
      expect(bad.status).toBe(503);
      expect(bad.json.error).toMatch(/HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE must be a positive number/);
    } finally {
      delete process.env.HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE;
    }
    expect((await call(health.GET, { path: "/api/health", headers: OPS })).status).toBe(200);
  });

  it("503 naming the migration when one is pending", async () => {
    await db.pool.query("DELETE FROM _hookledger_migrations WHERE name = '0006_observability'");
    try {
      const r = await call(health.GET, { path: "/api/health?scope=db", headers: OPS });
      expect(r.status).toBe(503);
      expect(r.json.db).toEqual({ ok: false, pendingMigrations: ["0006_observability"] });
    } finally {
      await db.pool.query("INSERT INTO _hookledger_migrations (name, checksum) VALUES ('0006_observability', 'x')");
    }
  });

  it("without the token: a generic reason only; no database error text, migration names or worker counts", async () => {
    await db.pool.query("ALTER TABLE worker_heartbeats RENAME TO worker_heartbeats_away");
    try {
      const bare = await call(health.GET, { path: "/api/health" });
      expect(bare.status).toBe(503);
      expect(bare.json).toEqual({ ok: false, reason: "database unavailable", db: { ok: false }, worker: null });
      expect(bare.text).not.toMatch(/relation|worker_heartbeats|hl_t_|postgres/i);
      const wrong = await call(health.GET, { path: "/api/health", token: "guess" });
      expect(wrong.json).toEqual(bare.json);
      const detailed = await call(health.GET, { path: "/api/health", headers: OPS });
      expect(detailed.json.db.error).toMatch(/worker_heartbeats/);
    } finally {
      await db.pool.query("ALTER TABLE worker_heartbeats_away RENAME TO worker_heartbeats");
    }
    await db.pool.query("DELETE FROM _hookledger_migrations WHERE name = '0006_observability'");
    try {
      const r = await call(health.GET, { path: "/api/health?scope=db" });
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ ok: false, reason: "migrations pending", db: { ok: false } });
      expect(r.text).not.toContain("0006_observability");
      expect(Object.keys(r.json.worker ?? {})).toEqual(["ok"]);
    } finally {
      await db.pool.query("INSERT INTO _hookledger_migrations (name, checksum) VALUES ('0006_observability', 'x')");
    }
  });
});
