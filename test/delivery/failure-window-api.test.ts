// failurePolicy through the API: stored on create and PATCH, defaults when
// omitted, null turns it off, nonsense is a 400 that writes nothing; a
// subscription read carries state, pausedReason and pausedAt. And migration
// 0016 on a database that already holds subscriptions and deliveries.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subsRoute from "../../app/api/v1/subscriptions/route";
import * as subRoute from "../../app/api/v1/subscriptions/[id]/route";
import { databaseBefore } from "../helpers/migration-db";

let db: TestDb;
let manager: string;

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
});
afterAll(async () => db?.close());

const body = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  url: `https://${id}.example.test/hooks`,
  eventTypes: ["assignment.graded"],
  tenant: "lincoln",
  ...extra,
});
const row = async (id: string) => (await db.pool.query("SELECT * FROM subscriptions WHERE id = $1", [id])).rows[0];

describe("create", () => {
  it("takes a policy, fills omitted fields with the defaults, and reads it back", async () => {
    const r = await call(subsRoute.POST, { token: manager, body: body("sub_p1", { failurePolicy: { windowSeconds: 3600, minAttempts: 5, probeIntervalSeconds: 60 } }) });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      state: "active",
      pausedReason: null,
      pausedAt: null,
      failurePolicy: { windowSeconds: 3600, minAttempts: 5, probeIntervalSeconds: 60 },
    });
    expect(await row("sub_p1")).toMatchObject({ failure_window_seconds: 3600, failure_min_attempts: 5, probe_interval_seconds: 60 });

    const partial = await call(subsRoute.POST, { token: manager, body: body("sub_p2", { failurePolicy: { minAttempts: 50 } }) });
    expect(partial.status).toBe(201);
    expect(partial.json.failurePolicy).toEqual({ windowSeconds: 86400, minAttempts: 50, probeIntervalSeconds: 900 });
  });

  it("without a policy gets the defaults (24 h, 20 attempts, a probe every 15 min); null turns it off", async () => {
    const d = await call(subsRoute.POST, { token: manager, body: body("sub_p3") });
    expect(d.json.failurePolicy).toEqual({ windowSeconds: 86400, minAttempts: 20, probeIntervalSeconds: 900 });
    const off = await call(subsRoute.POST, { token: manager, body: body("sub_p4", { failurePolicy: null }) });
    expect(off.status).toBe(201);
    expect(off.json.failurePolicy).toBeNull();
    expect(await row("sub_p4")).toMatchObject({ failure_window_seconds: null, failure_min_attempts: null, probe_interval_seconds: null });
  });

  const bad: [string, unknown, RegExp][] = [
    ["a window under a minute", { windowSeconds: 30 }, /windowSeconds is at least 60/],
    ["no attempts", { minAttempts: 0 }, /minAttempts is at least 1/],
    ["a probe interval under 10 s", { windowSeconds: 600, probeIntervalSeconds: 5 }, /probeIntervalSeconds is at least 10/],
    ["a probe interval longer than the window", { windowSeconds: 600, probeIntervalSeconds: 601 }, /must not exceed windowSeconds/],
    ["fractional seconds", { windowSeconds: 90.5 }, /windowSeconds/],
    ["a string", { windowSeconds: "1d" }, /windowSeconds/],
    ["an unknown field", { window: 600 }, /window/],
    ["not an object", 5, /failurePolicy/],
  ];
  for (const [what, policy, why] of bad)
    it(`refuses ${what} with a 400 and writes nothing`, async () => {
      const before = await tableCounts(db.pool);
      const r = await call(subsRoute.POST, { token: manager, body: body("sub_bad", { failurePolicy: policy }) });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json.error)).toMatch(why);
      expect(await tableCounts(db.pool)).toEqual(before);
    });
});

describe("PATCH", () => {
  it("changes the policy (audited with the one before) and turns it off with null", async () => {
    const r = await call(subRoute.PATCH, {
      token: manager,
      params: { id: "sub_p3" },
      body: { failurePolicy: { windowSeconds: 7200, minAttempts: 10, probeIntervalSeconds: 300 } },
    });
    expect(r.status).toBe(200);
    expect(r.json.failurePolicy).toEqual({ windowSeconds: 7200, minAttempts: 10, probeIntervalSeconds: 300 });
    const aud = await db.pool.query("SELECT details FROM audit_entries WHERE target_id = 'sub_p3' AND action = 'subscription.update'");
    expect(aud.rows[0].details).toEqual({ changed: ["failurePolicy"], before: { failurePolicy: { windowSeconds: 86400, minAttempts: 20, probeIntervalSeconds: 900 } } });
    const off = await call(subRoute.PATCH, { token: manager, params: { id: "sub_p3" }, body: { failurePolicy: null } });
    expect(off.json.failurePolicy).toBeNull();
    expect(await row("sub_p3")).toMatchObject({ failure_window_seconds: null });
  });

  it("refuses a nonsense policy with a 400 and changes nothing", async () => {
    const before = await tableCounts(db.pool);
    const was = await row("sub_p1");
    for (const failurePolicy of [
      { windowSeconds: 59 },
      { minAttempts: -1 },
      { windowSeconds: 600, probeIntervalSeconds: 9 },
      { windowSeconds: 60, probeIntervalSeconds: 61 },
    ]) {
      const r = await call(subRoute.PATCH, { token: manager, params: { id: "sub_p1" }, body: { failurePolicy } });
      expect(r.status).toBe(400);
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await row("sub_p1")).toEqual(was);
  });
});

describe("reads", () => {
  it("say why and since when a subscription is paused", async () => {
    const paused = await call(subRoute.PATCH, { token: manager, params: { id: "sub_p1" }, body: { state: "paused", reason: "maintenance" } });
    expect(paused.json).toMatchObject({ state: "paused", pausedReason: "manual", pausedAt: expect.any(String) });
    await db.pool.query(
      "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = '2026-01-02T03:04:05Z', failing_since = '2026-01-01T03:00:00Z', failing_attempts = 42, last_probe_at = '2026-01-02T03:20:00Z', last_probe_status = 503, last_probe_error = 'HTTP 503', last_probe_latency_ms = 12, next_probe_at = '2026-01-02T03:35:00Z', probe_count = 1 WHERE id = 'sub_p2'",
    );
    const r = await call(subRoute.GET, { token: manager, params: { id: "sub_p2" } });
    expect(r.json).toMatchObject({
      state: "paused",
      pausedReason: "failing",
      pausedAt: "2026-01-02T03:04:05.000Z",
      health: {
        failingSince: "2026-01-01T03:00:00.000Z",
        failedAttempts: 42,
        lastProbe: { at: "2026-01-02T03:20:00.000Z", status: 503, error: "HTTP 503", latencyMs: 12 },
        nextProbeAt: "2026-01-02T03:35:00.000Z",
      },
    });
    const list = await call(subsRoute.GET, { token: manager });
    expect(list.json.items).toEqual(expect.arrayContaining([expect.objectContaining({ id: "sub_p2", pausedReason: "failing" })]));
    const resumed = await call(subRoute.PATCH, { token: manager, params: { id: "sub_p2" }, body: { state: "active" } });
    expect(resumed.json).toMatchObject({ state: "active", pausedReason: null, pausedAt: null, health: { failingSince: null, failedAttempts: 0, nextProbeAt: null } });
  });
});

describe("migration 0016 on a database that already holds rows", () => {
  it("keeps every subscription and delivery, gives existing subscriptions the default policy, and marks paused ones as paused by hand", async () => {
    const mdb = await databaseBefore("0016");
    const c = mdb.client;
    try {
      await c.query(
        `INSERT INTO subscriptions (id, name, url, event_types, state, state_reason, updated_at)
         VALUES ('sub_a', 'a', 'https://a.example.test/h', '{assignment.graded}', 'active', NULL, now()),
                ('sub_b', 'b', 'https://b.example.test/h', '{assignment.graded}', 'paused', 'maintenance', '2026-01-01T00:00:00Z'),
                ('sub_c', 'c', 'https://c.example.test/h', '{assignment.graded}', 'disabled', '410', now())`,
      );
      await c.query(`INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_m' || i, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 300) i`);
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
         SELECT hl_delivery_key(s, 'evt_m' || i), 'evt_m' || i, s, 'assignment.graded' FROM generate_series(1, 300) i, unnest(ARRAY['sub_a', 'sub_b', 'sub_c']) s`,
      );
      const before = (await c.query("SELECT id, state, state_reason FROM subscriptions ORDER BY id")).rows;
      const applied = await mdb.applyRest();
      expect(applied[0]).toMatch(/^0016_/);
      expect((await c.query("SELECT id, state, state_reason FROM subscriptions ORDER BY id")).rows).toEqual(before);
      expect((await c.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(900);
      const after = await c.query(
        "SELECT id, failure_window_seconds AS w, failure_min_attempts AS m, probe_interval_seconds AS p, paused_reason, paused_at, failing_attempts, next_probe_at FROM subscriptions ORDER BY id",
      );
      expect(after.rows).toEqual([
        { id: "sub_a", w: 86400, m: 20, p: 900, paused_reason: null, paused_at: null, failing_attempts: 0, next_probe_at: null },
        { id: "sub_b", w: 86400, m: 20, p: 900, paused_reason: "manual", paused_at: new Date("2026-01-01T00:00:00Z"), failing_attempts: 0, next_probe_at: null },
        { id: "sub_c", w: 86400, m: 20, p: 900, paused_reason: null, paused_at: null, failing_attempts: 0, next_probe_at: null },
      ]);
      // The new constraints hold from now on.
      await expect(c.query("UPDATE subscriptions SET failure_window_seconds = NULL WHERE id = 'sub_a'")).rejects.toThrow(/subscriptions_failure_policy_check/);
      await expect(c.query("UPDATE subscriptions SET probe_interval_seconds = 90000 WHERE id = 'sub_a'")).rejects.toThrow(/subscriptions_failure_policy_check/);
      await expect(c.query("UPDATE subscriptions SET paused_reason = 'bored' WHERE id = 'sub_b'")).rejects.toThrow(/subscriptions_paused_reason_check/);
    } finally {
      await mdb.close();
    }
  });
});
