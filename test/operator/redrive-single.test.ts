// Single redrive through the real route handler, on a real Postgres.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";
import * as redrive from "../../app/api/v1/deliveries/[id]/redrive/route";
import { redriveDelivery } from "../../lib/redrive/redrive-batches";
import type { Principal } from "../../lib/auth/principal";

let db: TestDb;
let engineer: string;
let support: string;
let manager: string;

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  manager = await tokenFor(db.prisma, "manager");
  await seedSubscription(db, "sub_lincoln");
  await seedSubscription(db, "sub_paused", undefined, "paused");
  await seedSubscription(db, "sub_gone", undefined, "disabled");
});
afterAll(async () => db?.close());

const post = (id: string, body: unknown, token = engineer) => call(redrive.POST, { token, params: { id }, body });

describe("POST /api/v1/deliveries/:id/redrive", () => {
  it("moves a dead letter back to pending with a fresh budget, trigger redrive and the actor; identity unchanged; audited", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_one_" });
    await db.pool.query("UPDATE deliveries SET attempt_count = 6, total_attempts = 6 WHERE id = $1", [id]);
    const before = (await db.pool.query("SELECT delivery_key, event_id FROM deliveries WHERE id = $1", [id])).rows[0];
    const r = await post(id, { reason: "INC-2231 importer fixed" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id, state: "pending", attemptCount: 0, totalAttempts: 6, deadLetterReason: null, deliveryKey: before.delivery_key });
    const row = (await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0];
    expect(row).toMatchObject({
      state: "pending",
      attempt_count: 0,
      next_trigger: "redrive",
      next_actor: "token:test-engineer",
      delivery_key: before.delivery_key,
      event_id: before.event_id,
    });
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    const audit = await db.prisma.auditEntry.findMany({ where: { targetId: id } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "delivery.redrive", actor: "token:test-engineer", reason: "INC-2231 importer fixed", targetType: "delivery" });
    expect(audit[0].details).toMatchObject({ count: 1, subscriptionId: "sub_lincoln", from: "dead_letter", deadLetterReason: "permanent", lastStatusCode: 422 });
  });

  it("retries a scheduled delivery now as trigger manual", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_sched_" });
    await db.pool.query(
      "UPDATE deliveries SET state = 'scheduled', dead_letter_reason = NULL, dead_lettered_at = NULL, next_attempt_at = now() + interval '1 hour' WHERE id = $1",
      [id],
    );
    const r = await post(id, { reason: "customer waiting" });
    expect(r.status, r.text).toBe(200);
    const row = (await db.pool.query("SELECT state, next_trigger, next_attempt_at FROM deliveries WHERE id = $1", [id])).rows[0];
    expect(row.state).toBe("scheduled");
    expect(row.next_trigger).toBe("manual");
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect((await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: id } })).action).toBe("delivery.retry_now");
  });

  it("a manager (a district's integration manager) sends one dead letter again itself: redriven, audited as the manager", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_mg_" });
    const r = await post(id, { reason: "Importer fixed: term_id now optional" }, manager);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id, state: "pending", redrive: { action: "redrive" } });
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: id } });
    expect(audit).toMatchObject({ action: "delivery.redrive", actor: "token:test-manager", reason: "Importer fixed: term_id now optional" });
  });

  it("two concurrent redrives of one delivery redrive it once: one 200, one 409, one audit row", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_race_" });
    const rs = await Promise.all([post(id, { reason: "INC-1 first" }), post(id, { reason: "INC-1 second" })]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = rs.find((r) => r.status === 409)!;
    expect(loser.json.error.message).toMatch(/pending|nothing to redrive/);
    expect(await db.prisma.auditEntry.count({ where: { targetId: id } })).toBe(1);
  });

  const refusals: [string, () => Promise<{ id: string; token?: string; body: unknown }>, number, RegExp][] = [
    ["no reason", async () => ({ id: (await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_nr_" }))[0], body: {} }), 400, /reason/],
    [
      "a blank reason",
      async () => ({ id: (await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_br_" }))[0], body: { reason: "  " } }),
      400,
      /reason/,
    ],
    [
      "a support token",
      async () => ({ id: (await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_sp_" }))[0], token: support, body: { reason: "INC-9" } }),
      403,
      /may not/,
    ],
    ["an unknown delivery", async () => ({ id: "dlv_nope", body: { reason: "INC-9" } }), 404, /does not exist/],
    [
      "a paused subscription",
      async () => ({ id: (await seedDeadLetters(db, { subscriptionId: "sub_paused", n: 1, prefix: "evt_pa_" }))[0], body: { reason: "INC-9" } }),
      409,
      /paused.*Resume it first/,
    ],
    [
      "a disabled subscription",
      async () => ({ id: (await seedDeadLetters(db, { subscriptionId: "sub_gone", n: 1, prefix: "evt_go_" }))[0], body: { reason: "INC-9" } }),
      409,
      /disabled.*Fix the URL.*re-enable/,
    ],
    [
      "an already delivered delivery",
      async () => {
        const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_dd_" });
        await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now(), dead_letter_reason = NULL WHERE id = $1", [id]);
        return { id, body: { reason: "INC-9" } };
      },
      409,
      /already delivered/,
    ],
  ];
  for (const [name, setup, status, message] of refusals) {
    it(`${name} → ${status}, nothing changes, no audit row`, async () => {
      const { id, token, body } = await setup();
      const before = await tableCounts(db.pool);
      const row = (await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0];
      const r = await post(id, body, token);
      expect(r.status, r.text).toBe(status);
      expect(r.json.error.message).toMatch(message);
      expect(await tableCounts(db.pool)).toEqual(before);
      expect((await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0]).toEqual(row);
    });
  }

  it("a failed mutation leaves no audit row: a failure after the update rolls back the update and the audit", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_fail_" });
    // Make the audit insert fail inside the transaction: a trigger refuses it.
    await db.pool.query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store down'; END $$`);
    await db.pool.query(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION refuse_audit()`);
    try {
      const r = await post(id, { reason: "INC-3 will fail" });
      expect(r.status).toBe(500);
    } finally {
      await db.pool.query("DROP TRIGGER refuse_audit ON audit_entries; DROP FUNCTION refuse_audit()");
    }
    const row = (await db.pool.query("SELECT state, next_trigger FROM deliveries WHERE id = $1", [id])).rows[0];
    expect(row).toEqual({ state: "dead_letter", next_trigger: "scheduled" });
    expect(await db.prisma.auditEntry.count({ where: { targetId: id } })).toBe(0);
  });
});

describe("a district sending its own dead letter again while its endpoint is paused or disabled", () => {
  // The district's manager signed in to the dashboard, and the district's own API token.
  const manager: Principal = { kind: "user", id: "usr_kent", role: "manager", actor: "user:it@kent.example", email: "it@kent.example", tenantId: "kent" };
  const token: Principal = { kind: "token", id: "tok_kent", role: "manager", actor: "token:kent-sis", tenantId: "kent" };
  beforeAll(async () => {
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('kent', 'Kent USD')");
    await seedSubscription(db, "sub_kent_paused", undefined, "paused");
    await seedSubscription(db, "sub_kent_gone", undefined, "disabled");
    await db.pool.query("UPDATE subscriptions SET tenant = 'kent' WHERE id IN ('sub_kent_paused', 'sub_kent_gone')");
  });

  async function refusal(subscriptionId: string, principal: Principal): Promise<string> {
    const [id] = await seedDeadLetters(db, { subscriptionId, n: 1, prefix: `evt_${principal.kind}_${subscriptionId}_` });
    const err = await redriveDelivery(db.prisma, { id, reason: "importer fixed", principal }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toMatchObject({ code: "conflict", details: { subscriptionId, subscriptionState: expect.any(String) } });
    expect((await db.pool.query("SELECT state FROM deliveries WHERE id = $1", [id])).rows[0].state).toBe("dead_letter");
    return err!.message;
  }

  it("is told, in its words, to resume it first on the subscription's page: no API call, no redrive", async () => {
    expect(await refusal("sub_kent_paused", manager)).toBe(
      "sub_kent_paused SIS is paused (maintenance), so this delivery would only be held. Resume it first (Resume deliveries on the subscription's page, " +
        "Subscriptions › sub_kent_paused SIS), then send this delivery again.",
    );
    const gone = await refusal("sub_kent_gone", manager);
    expect(gone).toMatch(/^sub_kent_gone SIS is disabled \(410 Gone\): your endpoint answered that it is gone or refused it\. Fix its URL and resume it first/);
    for (const m of [gone]) expect(m).not.toMatch(/PATCH|\/api\/|redrive|tenant/i);
  });

  it("its API token, a program, keeps the API call", async () => {
    expect(await refusal("sub_kent_paused", token)).toMatch(/PATCH \/api\/v1\/subscriptions\/sub_kent_paused \{"state":"active"\}/);
  });
});
