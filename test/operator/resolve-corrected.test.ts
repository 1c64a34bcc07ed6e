// A fixed_at_source resolution may name the corrected event:
// the body's correctedEventId must be an existing event the caller may see, of
// the dead letter's own district, else 400 and nothing changes; when accepted it
// is kept in the delivery.resolve audit row and shown on both timelines (the
// resolved delivery's and the corrected event's deliveries').
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { seedDeadLetters } from "../helpers/redrive-helpers";
import { seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import * as resolveOne from "../../app/api/v1/deliveries/[id]/resolve/route";
import { createApiToken } from "../../lib/auth/tokens";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";
import { deliveryReceipt, describeDelivery } from "../../lib/dashboard/describe";

let db: TestDb;
let engineer: string;
let lincolnEngineer: string;
let jeffersonEngineer: string;
let fixedDelivery: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  engineer = (await createApiToken(db.prisma, { role: "engineer", name: "eng" })).token;
  lincolnEngineer = (await createApiToken(db.prisma, { role: "engineer", name: "lincoln-eng", tenantId: "lincoln" })).token;
  jeffersonEngineer = (await createApiToken(db.prisma, { role: "engineer", name: "jefferson-eng", tenantId: "jefferson" })).token;
  await seedSubscription(db.pool, { id: "sub_linc", name: "Lincoln SIS", tenant: "lincoln" });
  // The corrected event: published under a new id, delivered.
  await seedEvent(db.pool, { id: "evt_fixed", subject: { tenant: "lincoln", studentId: "stu_0", assignmentId: "asg_7", term_id: "T1" } });
  fixedDelivery = await seedDelivery(db.pool, {
    subscriptionId: "sub_linc",
    eventId: "evt_fixed",
    state: "delivered",
    attempts: [{ at: new Date(), status: 200, outcome: "delivered", ms: 20 }],
  });
  await seedEvent(db.pool, { id: "evt_jeff", subject: { tenant: "jefferson", studentId: "stu_j1" } });
});
afterAll(async () => db?.close());

const resolve = (id: string, body: unknown, token = engineer) => call(resolveOne.POST, { token, params: { id }, body });

describe("correctedEventId on a single resolve", () => {
  it("refuses a corrected event that is not one with a 400 and changes nothing", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_linc", n: 1, prefix: "evt_bad_" });
    const before = await tableCounts(db.pool);
    const auditBefore = await db.prisma.auditEntry.count();
    const reason = "INC-9 term_id added at the source";
    const cases: [Promise<{ status: number; json: any; text: string }>, RegExp][] = [
      [resolve(id, { resolution: "discarded", reason, correctedEventId: "evt_fixed" }), /fixed_at_source/],
      [resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "evt_nope" }), /no event evt_nope/],
      [resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "evt_bad_0" }), /own event/],
      [resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "" }), /correctedEventId/],
      // Another district's event: named to a global engineer, hidden from a district's (answered like a missing one).
      [resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "evt_jeff" }), /same district/],
      [resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "evt_jeff" }, lincolnEngineer), /no event evt_jeff/],
    ];
    for (const [p, msg] of cases) {
      const r = await p;
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    // Another district's engineer does not find the dead letter at all.
    expect((await resolve(id, { resolution: "fixed_at_source", reason, correctedEventId: "evt_fixed" }, jeffersonEngineer)).status).toBe(404);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await db.prisma.auditEntry.count()).toBe(auditBefore);
    expect((await db.pool.query("SELECT state FROM deliveries WHERE id = $1", [id])).rows[0].state).toBe("dead_letter");
  });

  it("keeps the corrected event in the audit row and shows it on both timelines", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_linc", n: 1, prefix: "evt_good_" });
    const r = await resolve(id, { resolution: "fixed_at_source", reason: "INC-9 term_id added at the source", correctedEventId: "evt_fixed" }, lincolnEngineer);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ state: "resolved", resolution: { resolution: "fixed_at_source" } });
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: id, action: "delivery.resolve" } });
    expect(audit.details).toMatchObject({ resolution: "fixed_at_source", eventId: "evt_good_0", correctedEventId: "evt_fixed" });

    const resolved = await getDeliveryDetail({ id }, db.pool);
    expect(resolved.history.find((h) => h.action === "delivery.resolve")?.details).toMatchObject({ correctedEventId: "evt_fixed" });
    expect(resolved.correctedEventId).toBe("evt_fixed");
    // The receipt and the one-line answer name it too.
    expect(deliveryReceipt(resolved, (t) => t)).toContain("the data was corrected at the source and sent again as a new event (evt_fixed)");
    expect(describeDelivery(resolved, (t) => t).text).toContain("fixed at source by API token “lincoln-eng”");
    expect(describeDelivery(resolved, (t) => t).text).toContain("; corrected as evt_fixed");
    const corrected = await getDeliveryDetail({ id: fixedDelivery }, db.pool);
    expect(corrected.corrections).toEqual([
      { at: expect.any(String), actor: "token:lincoln-eng", reason: "INC-9 term_id added at the source", deliveryId: id, eventId: "evt_good_0" },
    ]);
    // A resolve that names no corrected event adds nothing to the audit row's details, and nothing to any timeline.
    const [plain] = await seedDeadLetters(db, { subscriptionId: "sub_linc", n: 1, prefix: "evt_plain_" });
    expect((await resolve(plain, { resolution: "fixed_at_source", reason: "INC-10 fixed by hand" })).status).toBe(200);
    const plainAudit = await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: plain, action: "delivery.resolve" } });
    expect(plainAudit.details).not.toHaveProperty("correctedEventId");
    expect((await getDeliveryDetail({ id: fixedDelivery }, db.pool)).corrections).toHaveLength(1);
  });
});
