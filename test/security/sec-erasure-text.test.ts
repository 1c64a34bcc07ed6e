// An erasure also takes its value out of what operators wrote: audit reasons
// (and the batch and archive reasons audit details repeat), redrive batch
// reasons, resolution reasons, pause and archive reasons; within the
// erasure's tenant and tenant-less rows, as a whole word in any case. Its
// receipt counts those and the erased events whose ids contain the value (an
// id cannot be erased). Afterwards the API refuses a new reason that names
// the value (400), for anyone who could see that tenant's rows, while the
// erasure's record holds a keyed MAC of the value, never the value.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { seedDelivery, seedEvent } from "../helpers/dashboard-seed";
import { createApiToken } from "../../lib/auth/tokens";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import * as erasures from "../../app/api/v1/erasures/route";
import * as resolveOne from "../../app/api/v1/deliveries/[id]/resolve/route";
import * as resend from "../../app/api/v1/deliveries/[id]/resend/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import * as archive from "../../app/api/v1/subscriptions/[id]/archive/route";
import * as dlqResolve from "../../app/api/v1/dlq/resolve/route";
import * as recover from "../../app/api/v1/subscriptions/[id]/recover/route";
import * as backfill from "../../app/api/v1/subscriptions/[id]/backfill/route";
import * as secrets from "../../app/api/v1/subscriptions/[id]/secrets/route";

let db: TestDb;
const tok: Record<string, string> = {};
const ids: Record<string, string> = {};
const at = new Date(Date.now() - 3600_000);

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  for (const [key, role, tenantId] of [
    ["admin", "admin", null],
    ["engineer", "engineer", null],
    ["manager", "manager", null],
    ["lEngineer", "engineer", "lincoln"],
    ["jEngineer", "engineer", "jefferson"],
  ] as const)
    tok[key] = (await createApiToken(db.prisma, { role, name: key, tenantId })).token;
  for (const [id, tenant] of [
    ["sub_l", "lincoln"],
    ["sub_l2", "lincoln"],
    ["sub_l3", "lincoln"],
    ["sub_j", "jefferson"],
  ])
    await createSubscription(db.prisma, { id, name: id, url: `https://${id}.example.test/h`, eventTypes: ["assignment.graded"], tenant }, SYSTEM);
  // stu_881's two events (one id carries the value), a classmate's, and Jefferson's own stu_881.
  await seedEvent(db.pool, { id: "evt_grade_stu_881_a", subject: { tenant: "lincoln", studentId: "stu_881" } });
  await seedEvent(db.pool, { id: "evt_l_b", subject: { tenant: "lincoln", studentId: "stu_881" } });
  await seedEvent(db.pool, { id: "evt_l_other", subject: { tenant: "lincoln", studentId: "stu_900" } });
  await seedEvent(db.pool, { id: "evt_j_1", subject: { tenant: "jefferson", studentId: "stu_881" } });
  const dead = { state: "dead_letter", attempts: [{ at, status: 422, errorClass: "http_4xx", outcome: "dead_letter" as const }] };
  const done = { state: "delivered", attempts: [{ at, status: 200, outcome: "delivered" as const }] };
  ids.deadA = await seedDelivery(db.pool, { subscriptionId: "sub_l", eventId: "evt_grade_stu_881_a", ...dead });
  ids.doneB = await seedDelivery(db.pool, { subscriptionId: "sub_l", eventId: "evt_l_b", ...done });
  ids.other = await seedDelivery(db.pool, { subscriptionId: "sub_l3", eventId: "evt_l_other", ...done });
  ids.otherDead = await seedDelivery(db.pool, { subscriptionId: "sub_l2", eventId: "evt_l_other", ...dead });
  ids.jeff = await seedDelivery(db.pool, { subscriptionId: "sub_j", eventId: "evt_j_1", ...done });

  // What operators wrote about stu_881 before the request came, through the API.
  const ok = (r: { status: number; text: string }) => expect(r.status, r.text).toBeLessThan(300);
  ok(
    await call(resolveOne.POST, {
      token: tok.engineer,
      params: { id: ids.deadA },
      body: { resolution: "discarded", reason: "Parent of STU_881 asked us to stop, INC-9" },
    }),
  );
  ok(
    await call(subscription.PATCH, {
      method: "PATCH",
      token: tok.manager,
      params: { id: "sub_l" },
      body: { state: "paused", reason: "hold while stu_881's record is fixed" },
    }),
  );
  ok(await call(archive.POST, { token: tok.manager, params: { id: "sub_l2" }, body: { reason: "replaced; see stu_881 ticket" } }));
  // A batch's reason, and its cancel's audit row that repeats it; Jefferson's own stu_881; a longer id that only starts alike.
  const batch = await db.pool.query(
    "INSERT INTO redrive_batches (filter, reason, actor, rate_per_second, matched, tenant_id, status) VALUES ('{}', 'redo stu_881 grades', 'user:x', 10, 0, 'lincoln', 'cancelled') RETURNING id",
  );
  ids.batch = batch.rows[0].id;
  await db.pool.query(
    `INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details, tenant_id) VALUES
       ('user:x', 'redrive.cancel', 'redrive_batch', $1, 'stop: stu_881 done', jsonb_build_object('matched', 0, 'redriven', 0, 'skipped', 0, 'remaining', 0, 'batchReason', 'redo stu_881 grades'), 'lincoln'),
       ('user:x', 'subscription.pause', 'subscription', 'sub_j', 'jefferson''s own stu_881', '{}', 'jefferson'),
       ('user:x', 'subscription.pause', 'subscription', 'sub_l', 'INC-8812 about stu_8810', '{}', 'lincoln')`,
    [ids.batch],
  );
});
afterAll(async () => db?.close());

/** Every operator text the ledger holds that names stu_881 as a word (any case): [table, text]. Ids are not operators' text. */
async function mentions(): Promise<string[][]> {
  const re = "(?<![A-Za-z0-9])stu_881(?![A-Za-z0-9])";
  const { rows } = await db.pool.query(
    `SELECT 'audit.reason' AS t, reason AS x FROM audit_entries WHERE reason ~* $1
     UNION ALL SELECT 'audit.details', details::text FROM audit_entries WHERE concat(details->>'batchReason', ' ', details->>'archiveReason') ~* $1
     UNION ALL SELECT 'batch.reason', reason FROM redrive_batches WHERE reason ~* $1
     UNION ALL SELECT 'delivery.resolution_reason', resolution_reason FROM deliveries WHERE resolution_reason ~* $1
     UNION ALL SELECT 'subscription.state_reason', state_reason FROM subscriptions WHERE state_reason ~* $1
     UNION ALL SELECT 'subscription.archive_reason', archive_reason FROM subscriptions WHERE archive_reason ~* $1
     ORDER BY 1, 2`,
    [re],
  );
  return rows.map((r) => [r.t, r.x]);
}

const erase = (dryRun: boolean) =>
  call(erasures.POST, { token: tok.admin, body: { subject: { studentId: "stu_881" }, tenant: "lincoln", reason: "records request 2291", dryRun } });

describe("an erasure scrubs operators' text and reports ids it cannot change", () => {
  let receipt: Record<string, unknown>;

  it("a dry run counts them and changes nothing", async () => {
    const before = await mentions();
    expect(before.length).toBeGreaterThanOrEqual(9);
    const r = await erase(true);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ events: 2, eventIdsWithValue: 1, reasonsScrubbed: 8 });
    expect(await mentions()).toEqual(before);
  });

  it("the erasure takes stu_881 out of every reason in Lincoln and tenant-less rows, and counts what it did", async () => {
    const r = await erase(false);
    expect(r.status, r.text).toBe(200);
    receipt = r.json;
    expect(receipt).toMatchObject({ events: 2, eventIdsWithValue: 1, reasonsScrubbed: 8 });
    // Jefferson's own stu_881 is another district's student: its row keeps its text.
    expect(await mentions()).toEqual([["audit.reason", "jefferson's own stu_881"]]);
    const scrubbed = await db.pool.query("SELECT resolution_reason FROM deliveries WHERE id = $1", [ids.deadA]);
    expect(scrubbed.rows[0].resolution_reason).toBe("Parent of [erased] asked us to stop, INC-9");
    const state = await db.pool.query("SELECT state_reason, archive_reason FROM subscriptions WHERE id IN ('sub_l', 'sub_l2') ORDER BY id");
    expect(state.rows).toEqual([
      { state_reason: "hold while [erased]'s record is fixed", archive_reason: null },
      { state_reason: null, archive_reason: "replaced; see [erased] ticket" },
    ]);
    // The event id is the delivery's identity: kept, and counted in the receipt instead.
    const resolved = await db.pool.query("SELECT details->>'eventId' AS e FROM audit_entries WHERE action = 'delivery.resolve' AND target_id = $1", [ids.deadA]);
    expect(resolved.rows).toEqual([{ e: "evt_grade_stu_881_a" }]);
    // A longer word that only begins with the value is left alone.
    expect((await db.pool.query("SELECT 1 FROM audit_entries WHERE reason = 'INC-8812 about stu_8810'")).rowCount).toBe(1);
  });

  it("the record holds a keyed MAC of the value, never the value or its plain hash", async () => {
    const { rows } = await db.pool.query("SELECT * FROM erasures WHERE id = $1", [receipt.id]);
    const row = rows[0];
    expect(row).toMatchObject({ event_ids_with_value: 1, reasons_scrubbed: 8, value_length: 7 });
    expect(Buffer.isBuffer(row.value_mac) && row.value_mac.length).toBe(32);
    const text = JSON.stringify(row) + row.value_mac.toString("latin1");
    expect(text.toLowerCase()).not.toContain("stu_881");
    for (const v of ["stu_881", "STU_881", "studentId:stu_881"])
      for (const alg of ["sha256", "sha1", "md5"]) expect(row.value_mac.equals(createHash(alg).update(v).digest())).toBe(false);
  });
});

describe("the API refuses new reasons that name an erased value", () => {
  const refused = (r: { status: number; json: { error?: { message?: string } } }) => {
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/erased/);
    expect(JSON.stringify(r.json)).not.toMatch(/stu_881/i);
  };

  it("resend, redrive, resolve, bulk redrive and resolve, pause, archive, recover, backfill, rotation and erasure: 400, nothing written", async () => {
    const before = await tableCounts(db.pool);
    const reason = { reason: "again for Stu_881, INC-10" };
    refused(await call(resend.POST, { token: tok.lEngineer, params: { id: ids.other }, body: reason }));
    refused(await call(resend.POST, { token: tok.engineer, params: { id: ids.other }, body: reason }));
    refused(await call(redriveOne.POST, { token: tok.engineer, params: { id: ids.otherDead }, body: reason }));
    refused(await call(resolveOne.POST, { token: tok.engineer, params: { id: ids.otherDead }, body: { resolution: "discarded", ...reason } }));
    refused(await call(redrives.POST, { token: tok.engineer, body: { filter: { subscriptionId: "sub_l2" }, ...reason } }));
    refused(await call(dlqResolve.POST, { token: tok.engineer, body: { filter: { subscriptionId: "sub_l2" }, resolution: "discarded", ...reason } }));
    refused(await call(subscription.PATCH, { method: "PATCH", token: tok.manager, params: { id: "sub_l" }, body: { state: "active", reason: "(stu_881)" } }));
    refused(await call(archive.POST, { token: tok.manager, params: { id: "sub_l" }, body: { reason: "done with STU_881" } }));
    const since = new Date(Date.now() - 86400_000).toISOString();
    refused(await call(recover.POST, { token: tok.engineer, params: { id: "sub_l3" }, body: { since, ...reason } }));
    refused(await call(backfill.POST, { token: tok.engineer, params: { id: "sub_l3" }, body: { since, ...reason } }));
    refused(await call(secrets.POST, { token: tok.manager, params: { id: "sub_l3" }, body: { reason: "rotate: stu_881 saw it" } }));
    refused(await call(erasures.POST, { token: tok.admin, body: { subject: { studentId: "stu_900" }, reason: "sibling of stu_881, request 2300" } }));
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("a reason without it goes through; Jefferson's engineer is not refused Lincoln's erased value", async () => {
    expect((await call(resend.POST, { token: tok.lEngineer, params: { id: ids.other }, body: { reason: "INC-10 stu_8810" } })).status).toBe(200);
    const j = await call(resend.POST, { token: tok.jEngineer, params: { id: ids.jeff }, body: { reason: "jefferson's stu_881, INC-11" } });
    expect(j.status, j.text).toBe(200);
  });
});
