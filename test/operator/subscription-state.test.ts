// Every operator change of a subscription's state, through the real route
// handlers on a real Postgres, leaves one audit row whose details match the
// action's schema in lib/audit.ts (the rows are written in SQL by
// lib/ledger/sql/subscription-state.ts, so the writer's check does not see
// them), with the subscription's tenant, and a state change that is not one
// (pausing a paused subscription) writes no row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as archiveRoute from "../../app/api/v1/subscriptions/[id]/archive/route";
import * as unarchiveRoute from "../../app/api/v1/subscriptions/[id]/unarchive/route";
import * as subRoute from "../../app/api/v1/subscriptions/[id]/route";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import { AUDIT_ACTIONS, type AuditAction } from "../../lib/audit";

let db: TestDb;
let manager: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  manager = await tokenFor(db.prisma, "manager");
  await createSubscription(
    db.prisma,
    { id: "sub_st", name: "Lincoln SIS", tenant: "lincoln", url: "https://lincoln.example.test/hooks", eventTypes: ["assignment.graded"] },
    SYSTEM,
  );
});
afterAll(async () => db?.close());

const patch = (body: unknown) => call(subRoute.PATCH, { token: manager, params: { id: "sub_st" }, body });
const audits = async () =>
  (
    await db.pool.query<{ action: AuditAction; actor: string; reason: string | null; details: unknown; tenant_id: string | null }>(
      "SELECT action, actor, reason, details, tenant_id FROM audit_entries WHERE target_type = 'subscription' AND target_id = 'sub_st' AND action <> 'subscription.create' ORDER BY id",
    )
  ).rows;
const row = async () =>
  (await db.pool.query("SELECT state, state_reason, paused_reason, paused_at, archived_at, archived_by FROM subscriptions WHERE id = 'sub_st'")).rows[0];

describe("operator state changes (lib/ledger/sql/subscription-state.ts)", () => {
  it("pause, pause again, resume, archive, unarchive: one well-formed audit row per change, with the tenant", async () => {
    expect((await patch({ state: "paused", reason: "district asked us to hold grades" })).status).toBe(200);
    expect(await row()).toMatchObject({ state: "paused", state_reason: "district asked us to hold grades", paused_reason: "manual" });
    expect((await row()).paused_at).toBeInstanceOf(Date);
    // Already paused: no change, no row.
    expect((await patch({ state: "paused", reason: "again" })).status).toBe(200);
    await db.pool.query("UPDATE subscriptions SET failing_attempts = 3, failing_since = now() WHERE id = 'sub_st'");
    const resumed = await patch({ state: "active" });
    expect(resumed.status).toBe(200);
    expect(resumed.json).toMatchObject({ state: "active", stateReason: null });
    expect(await db.pool.query("SELECT failing_attempts, failing_since, paused_reason, paused_at FROM subscriptions WHERE id = 'sub_st'").then((r) => r.rows[0])).toEqual(
      {
        failing_attempts: 0,
        failing_since: null,
        paused_reason: null,
        paused_at: null,
      },
    );
    const a = await call(archiveRoute.POST, { token: manager, params: { id: "sub_st" }, body: { reason: "replaced by the new SIS" } });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ superseded: 0, inFlight: 0 });
    expect((await row()).archived_by).toMatch(/^token:/);
    expect((await call(archiveRoute.POST, { token: manager, params: { id: "sub_st" }, body: { reason: "twice" } })).status).toBe(409);
    expect((await call(unarchiveRoute.POST, { token: manager, params: { id: "sub_st" }, body: { reason: "the new SIS fell through" } })).status).toBe(200);
    expect((await row()).archived_at).toBeNull();
    expect((await call(unarchiveRoute.POST, { token: manager, params: { id: "sub_st" }, body: { reason: "twice" } })).status).toBe(409);

    const rows = await audits();
    expect(rows.map((r) => r.action)).toEqual(["subscription.pause", "subscription.resume", "subscription.archive", "subscription.unarchive"]);
    for (const r of rows) {
      expect(AUDIT_ACTIONS[r.action].details.safeParse(r.details).success, `${r.action} ${JSON.stringify(r.details)}`).toBe(true);
      expect(r.tenant_id).toBe("lincoln");
      expect(r.actor).toMatch(/^token:/);
    }
    expect(rows[0].details).toEqual({ from: "active", to: "paused" });
    expect(rows[1].details).toEqual({ from: "paused", to: "active" });
    expect(rows[2]).toMatchObject({ reason: "replaced by the new SIS", details: { superseded: 0, inFlight: 0, previousState: "active" } });
    expect(rows[3].details).toMatchObject({ archivedBy: expect.stringMatching(/^token:/), archiveReason: "replaced by the new SIS" });
    expect(new Date((rows[3].details as { archivedAt: string }).archivedAt).getTime()).toBeGreaterThan(0);
  });

  it("a refused change writes nothing: an unknown subscription is 404 with no audit row", async () => {
    const before = (await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n;
    expect((await call(subRoute.PATCH, { token: manager, params: { id: "sub_nope" }, body: { state: "paused" } })).status).toBe(404);
    expect((await call(archiveRoute.POST, { token: manager, params: { id: "sub_nope" }, body: { reason: "gone" } })).status).toBe(404);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n).toBe(before);
  });
});
