// Archive and unarchive through the real route handlers on a real Postgres:
// an archived subscription gets no new deliveries, its queued ones are
// resolved as superseded (each with its audit row), its history stays
// searchable, it leaves the default lists, the worker's claim skips it, a
// delivery in flight at archive time records its attempt as it happened, and
// every refusal (400, 409, 403) writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as archiveRoute from "../../app/api/v1/subscriptions/[id]/archive/route";
import * as unarchiveRoute from "../../app/api/v1/subscriptions/[id]/unarchive/route";
import * as subsRoute from "../../app/api/v1/subscriptions/route";
import * as subRoute from "../../app/api/v1/subscriptions/[id]/route";
import * as healthRoute from "../../app/api/v1/dashboard/subscriptions/route";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import { publishEventStandalone } from "../../lib/events/publish";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { writeResults, type AttemptResult } from "../../lib/ledger/sql/write-results";
import { databaseBefore } from "../helpers/migration-db";
import { delivered, retried503 } from "../helpers/worker-helpers";

let db: TestDb;
let manager: string;
let support: string;

const sub = (id: string, eventTypes = ["assignment.graded"]) =>
  createSubscription(db.prisma, { id, name: `${id} SIS`, url: `https://${id}.example.test/hooks`, eventTypes }, SYSTEM);
const publish = (id: string, studentId = "stu_1") => publishEventStandalone(db.prisma, { id, type: "assignment.graded", data: { grade: "A" }, subject: { studentId } });
const archive = (id: string, body: unknown, token = manager) => call(archiveRoute.POST, { token, params: { id }, body });
const unarchive = (id: string, body: unknown, token = manager) => call(unarchiveRoute.POST, { token, params: { id }, body });
const states = async (subId: string) =>
  (await db.pool.query("SELECT state, resolution, count(*)::int AS n FROM deliveries WHERE subscription_id = $1 GROUP BY 1, 2 ORDER BY 1, 2", [subId])).rows;
const claimOpts = (exclude: string[] = []) => ({ owner: "w1", limit: 50, perSubscription: 50, leaseSlackSeconds: 30, excludeSubscriptions: exclude });

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  support = await tokenFor(db.prisma, "support");
});
afterAll(async () => db?.close());

describe("POST /api/v1/subscriptions/:id/archive", () => {
  it("resolves the queued deliveries as superseded with an audit row each, stops new deliveries, keeps history searchable and leaves the default lists", async () => {
    await sub("sub_arch");
    await sub("sub_live");
    await publish("evt_arch_1", "stu_arch");
    await publish("evt_arch_2", "stu_arch");
    // One of them is due later (a retry): scheduled rows are superseded too.
    await db.pool.query(
      "UPDATE deliveries SET state = 'scheduled', next_attempt_at = now() + interval '1 hour' WHERE subscription_id = 'sub_arch' AND event_id = 'evt_arch_2'",
    );
    // One is already delivered: history, untouched.
    await publish("evt_arch_0", "stu_arch");
    await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE subscription_id = 'sub_arch' AND event_id = 'evt_arch_0'");

    const r = await archive("sub_arch", { reason: "Westfield decommissioned its SIS" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: "sub_arch", archiveReason: "Westfield decommissioned its SIS", archivedBy: "token:test-manager", superseded: 2, inFlight: 0 });
    expect(r.json.archivedAt).toEqual(expect.any(String));

    expect(await states("sub_arch")).toEqual([
      { state: "delivered", resolution: null, n: 1 },
      { state: "resolved", resolution: "superseded", n: 2 },
    ]);
    const resolved = await db.pool.query("SELECT resolved_by, resolution_reason FROM deliveries WHERE subscription_id = 'sub_arch' AND state = 'resolved'");
    expect(resolved.rows).toEqual([
      { resolved_by: "token:test-manager", resolution_reason: "Westfield decommissioned its SIS" },
      { resolved_by: "token:test-manager", resolution_reason: "Westfield decommissioned its SIS" },
    ]);
    const audit = await db.pool.query(
      "SELECT action, target_type, reason, details FROM audit_entries WHERE action IN ('subscription.archive', 'delivery.resolve') ORDER BY id",
    );
    expect(audit.rows.map((a) => a.action).sort()).toEqual(["delivery.resolve", "delivery.resolve", "subscription.archive"]);
    const archRow = audit.rows.find((a) => a.action === "subscription.archive");
    expect(archRow).toMatchObject({
      target_type: "subscription",
      reason: "Westfield decommissioned its SIS",
      details: { superseded: 2, inFlight: 0, previousState: "active" },
    });
    expect(audit.rows.filter((a) => a.action === "delivery.resolve").every((a) => a.details.resolution === "superseded")).toBe(true);
    // The live subscription's deliveries are untouched.
    expect(await states("sub_live")).toEqual([{ state: "pending", resolution: null, n: 3 }]);

    // No new deliveries for it; the other subscription still gets its own.
    const next = await publish("evt_arch_3", "stu_arch");
    expect(next.deliveries.map((d) => d.subscriptionId)).toEqual(["sub_live"]);
    expect(Number((await db.pool.query("SELECT count(*) FROM deliveries WHERE subscription_id = 'sub_arch'")).rows[0].count)).toBe(3);

    // History stays searchable: a lookup by the student id finds its deliveries.
    const found = await findLookupResults({ q: "stu_arch" }, db.pool);
    expect(
      found.deliveries
        .filter((d) => d.subscriptionId === "sub_arch")
        .map((d) => d.eventId)
        .sort(),
    ).toEqual(["evt_arch_0", "evt_arch_1", "evt_arch_2"]);

    // Out of the default lists, in them with archived=true.
    const list = await call(subsRoute.GET, { token: support, path: "/api/v1/subscriptions" });
    expect(list.json.items.map((s: { id: string }) => s.id)).not.toContain("sub_arch");
    const all = await call(subsRoute.GET, { token: support, path: "/api/v1/subscriptions?archived=true" });
    expect(all.json.items.find((s: { id: string }) => s.id === "sub_arch")).toMatchObject({ archiveReason: "Westfield decommissioned its SIS" });
    const health = await call(healthRoute.GET, { token: support, path: "/api/v1/dashboard/subscriptions" });
    expect(health.json.items.map((s: { id: string }) => s.id)).toEqual(["sub_live"]);
    const healthAll = await call(healthRoute.GET, { token: support, path: "/api/v1/dashboard/subscriptions?archived=true" });
    expect(healthAll.json.items.map((s: { id: string }) => s.id).sort()).toEqual(["sub_arch", "sub_live"]);
    // Its own page still reads it.
    const one = await call(subRoute.GET, { token: support, params: { id: "sub_arch" } });
    expect(one.json.archivedAt).toEqual(r.json.archivedAt);
  });

  it("refuses a second archive (409), an archive without a reason (400), an unknown id (404) and a support user (403), writing nothing", async () => {
    await sub("sub_refuse");
    await publish("evt_refuse_1");
    const before = await tableCounts(db.pool);
    const noReason = await archive("sub_refuse", {});
    expect(noReason.status).toBe(400);
    expect(noReason.json.error.details).toEqual([expect.objectContaining({ path: "body.reason" })]);
    expect((await archive("sub_refuse", { reason: "  " })).status).toBe(400);
    expect((await archive("sub_nope", { reason: "gone for good" })).status).toBe(404);
    expect((await archive("sub_refuse", { reason: "gone for good" }, support)).status).toBe(403);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.pool.query("SELECT archived_at FROM subscriptions WHERE id = 'sub_refuse'")).rows[0].archived_at).toBeNull();
    expect(await states("sub_refuse")).toEqual([{ state: "pending", resolution: null, n: 1 }]);

    expect((await archive("sub_refuse", { reason: "gone for good" })).status).toBe(200);
    const afterFirst = await tableCounts(db.pool);
    const again = await archive("sub_refuse", { reason: "gone for good, again" });
    expect(again.status).toBe(409);
    expect(again.json.error.message).toMatch(/already archived/);
    expect(await tableCounts(db.pool)).toEqual(afterFirst);
    // An archived subscription is not edited (unarchive first); nothing changes.
    const patch = await call(subRoute.PATCH, { token: manager, params: { id: "sub_refuse" }, body: { name: "renamed" } });
    expect(patch.status).toBe(409);
    expect((await db.pool.query("SELECT name FROM subscriptions WHERE id = 'sub_refuse'")).rows[0].name).toBe("sub_refuse SIS");
    expect(await tableCounts(db.pool)).toEqual(afterFirst);
  });

  it("unarchive brings it back for new events (409 when not archived, 400 without a reason); the superseded deliveries stay resolved", async () => {
    await sub("sub_back");
    await publish("evt_back_1");
    expect((await unarchive("sub_back", { reason: "was never archived" })).status).toBe(409);
    expect((await archive("sub_back", { reason: "district paused its contract" })).status).toBe(200);
    const before = await tableCounts(db.pool);
    expect((await unarchive("sub_back", {})).status).toBe(400);
    expect(await tableCounts(db.pool)).toEqual(before);
    const r = await unarchive("sub_back", { reason: "contract renewed" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: "sub_back", archivedAt: null, archiveReason: null, archivedBy: null });
    const row = await db.pool.query("SELECT reason, details FROM audit_entries WHERE action = 'subscription.unarchive' AND target_id = 'sub_back'");
    expect(row.rows).toEqual([
      { reason: "contract renewed", details: { archivedAt: expect.any(String), archivedBy: "token:test-manager", archiveReason: "district paused its contract" } },
    ]);
    const next = await publish("evt_back_2");
    expect(next.deliveries.map((d) => d.subscriptionId)).toContain("sub_back");
    expect(await states("sub_back")).toEqual([
      { state: "pending", resolution: null, n: 1 },
      { state: "resolved", resolution: "superseded", n: 1 },
    ]);
  });

  it("a delivery in flight at archive time records its attempt as it happened; a retry it needs is held, not claimed, until unarchive", async () => {
    await db.pool.query("UPDATE subscriptions SET state = 'paused' WHERE id <> 'sub_flight' AND state = 'active'");
    await sub("sub_flight");
    await publish("evt_flight_1");
    await publish("evt_flight_2");
    const claimed = await claimDeliveries(db.pool, claimOpts());
    const mine = claimed.filter((c) => c.subscriptionId === "sub_flight");
    expect(mine).toHaveLength(2);
    const r = await archive("sub_flight", { reason: "retired mid-send" });
    expect(r.json).toMatchObject({ superseded: 0, inFlight: 2 });
    expect(await states("sub_flight")).toEqual([{ state: "in_flight", resolution: null, n: 2 }]);

    const result = (row: (typeof mine)[number], ok: boolean): AttemptResult => (ok ? delivered(row) : retried503(row, new Date(Date.now() - 1000)));
    const written = await writeResults(db.pool, "w1", [result(mine[0], true), result(mine[1], false)]);
    expect(written.map((w) => w.id).sort()).toEqual(mine.map((m) => m.id).sort());
    const attempts = await db.pool.query("SELECT outcome FROM attempts WHERE subscription_id = 'sub_flight' ORDER BY outcome");
    expect(attempts.rows.map((a) => a.outcome)).toEqual(["delivered", "retry"]);
    // The retry is due now, but the claim skips an archived subscription.
    expect((await claimDeliveries(db.pool, claimOpts())).filter((c) => c.subscriptionId === "sub_flight")).toEqual([]);
    expect((await unarchive("sub_flight", { reason: "back after all" })).status).toBe(200);
    expect((await claimDeliveries(db.pool, claimOpts())).map((c) => c.id)).toEqual([mine[1].id]);
  });
});

describe("an archive against a write of deliveries still in its transaction (no foreign key holds the subscription since 0024)", () => {
  /** Until some session waits for a row lock on subscriptions (the archive's FOR UPDATE), at most 5 s. */
  const lockWaiter = async () => {
    for (let i = 0; i < 100; i++) {
      const { rows } = await db.pool.query(
        "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.query ILIKE '%FROM subscriptions WHERE id%FOR UPDATE%'",
      );
      if (rows[0].n > 0) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  };

  const raceWith = async (subId: string, write: (c: import("pg").PoolClient) => Promise<void>) => {
    const c = await db.pool.connect();
    try {
      await c.query("BEGIN");
      await write(c);
      const pending = archive(subId, { reason: "district moved to a new SIS" });
      // The archive waits for the writer's commit instead of resolving without its rows.
      expect(await lockWaiter()).toBe(true);
      await c.query("COMMIT");
      const r = await pending;
      expect(r.status).toBe(200);
      return r.json as { superseded: number };
    } finally {
      c.release();
    }
  };

  it("waits for an enqueue that wrote deliveries for the subscription, then supersedes them", async () => {
    await sub("sub_race_enq");
    const r = await raceWith("sub_race_enq", async (c) => {
      const { enqueueEvents } = await import("../../lib/ledger/sql/enqueue");
      const { eventRow } = await import("../../lib/events/publish");
      const out = await enqueueEvents(c, [eventRow({ id: "evt_race_enq", type: "assignment.graded", data: { grade: "B" } })], ["sub_race_enq"]);
      expect(out.get("evt_race_enq")).toHaveLength(1);
    });
    expect(r.superseded).toBe(1);
    expect(await states("sub_race_enq")).toEqual([{ state: "resolved", resolution: "superseded", n: 1 }]);
  });

  it("waits for a backfill that wrote deliveries for the subscription, then supersedes them", async () => {
    await publish("evt_race_bf");
    await sub("sub_race_bf");
    const { createBackfillDeliveries } = await import("../../lib/ledger/sql/backfill");
    const r = await raceWith("sub_race_bf", async (c) => {
      const out = await createBackfillDeliveries(c, "rdb_none", "sub_race_bf", [{ seq: 1, event_id: "evt_race_bf" }]);
      expect(out.get(1)).toBe("created");
    });
    expect(r.superseded).toBe(1);
    expect(await states("sub_race_bf")).toEqual([{ state: "resolved", resolution: "superseded", n: 1 }]);
  });
});

it("migration 0018 keeps every row of a database that already holds subscriptions and deliveries", async () => {
  const mdb = await databaseBefore("0018");
  const c = mdb.client;
  try {
    await c.query(
      `INSERT INTO subscriptions (id, name, url, event_types) SELECT 'sub_m' || i, 'm' || i, 'https://m.example.test/h', '{assignment.graded}' FROM generate_series(1, 20) i`,
    );
    await c.query(`INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_m' || i, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 300) i`);
    await c.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
       SELECT hl_delivery_key('sub_m' || (i % 20 + 1), 'evt_m' || i), 'evt_m' || i, 'sub_m' || (i % 20 + 1), 'assignment.graded' FROM generate_series(1, 300) i`,
    );
    expect(await mdb.applyRest()).toEqual(mdb.rest);
    expect((await c.query("SELECT count(*)::int AS n, count(archived_at)::int AS archived FROM subscriptions")).rows[0]).toEqual({ n: 20, archived: 0 });
    expect((await c.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(300);
    // The new CHECK holds: archived_at, archive_reason and archived_by come together.
    await expect(c.query("UPDATE subscriptions SET archived_at = now() WHERE id = 'sub_m1'")).rejects.toThrow(/subscriptions_archive_check/);
    await c.query("UPDATE subscriptions SET archived_at = now(), archive_reason = 'r', archived_by = 'user:a' WHERE id = 'sub_m1'");
    // The replaced enqueue leaves the archived one out.
    const { rows } = await c.query(
      `SELECT subscription_id FROM hl_enqueue_events(ARRAY['evt_new'], ARRAY['assignment.graded'], ARRAY['\\x7b7d'::bytea], ARRAY[now()], ARRAY[NULL::text], ARRAY['{}'::jsonb], ARRAY[]::text[], ARRAY[1], ARRAY[0])`,
    );
    expect(rows).toHaveLength(19);
    expect(rows.map((r) => r.subscription_id)).not.toContain("sub_m1");
  } finally {
    await mdb.close();
  }
});

it("only an admin subscribes to every event type (*): a manager's create or edit naming * is refused with the field named, writing nothing", async () => {
  const admin = await tokenFor(db.prisma, "admin");
  const before = await tableCounts(db.pool);
  const body = { name: "Everything", url: "https://all.example.test/hooks", eventTypes: ["*"], tenant: "lincoln" };
  const r = await call(subsRoute.POST, { token: manager, body });
  expect(r.status).toBe(403);
  expect(r.json.error.details).toEqual([expect.objectContaining({ path: "body.eventTypes" })]);
  await sub("sub_named");
  const afterSub = await tableCounts(db.pool);
  expect(afterSub.subscriptions).toBe(before.subscriptions + 1);
  expect((await call(subRoute.PATCH, { token: manager, params: { id: "sub_named" }, body: { eventTypes: ["*"] } })).status).toBe(403);
  expect(await tableCounts(db.pool)).toEqual(afterSub);
  expect((await call(subsRoute.POST, { token: admin, body })).status).toBe(201);
});
