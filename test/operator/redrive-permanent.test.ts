// The bulk redrive's preview says how many of the selected dead letters were
// rejected as permanent, by whom and with what answer, over
// exactly the rows the redrive would take: active subscriptions only, the filter
// and the caller's district applied.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { previewRedrive } from "../../lib/redrive/redrive-batches";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  const p = db.pool;
  await p.query("INSERT INTO tenants (id, name) VALUES ('maplegrove', 'Maple Grove'), ('lincoln', 'Lincoln USD')");
  await seedSubscription(p, { id: "sub_maple", name: "Maple Grove Public Schools", tenant: "maplegrove" });
  await seedSubscription(p, { id: "sub_linc", name: "Lincoln USD", tenant: "lincoln" });
  await seedSubscription(p, { id: "sub_paused", name: "Roosevelt", tenant: "lincoln", state: "paused" });
  const dead = async (sub: string, id: string, status: number, reason: string, excerpt: string) => {
    await seedEvent(p, { id, subject: { tenant: sub === "sub_maple" ? "maplegrove" : "lincoln", studentId: `stu_${id}` } });
    await seedDelivery(p, {
      subscriptionId: sub,
      eventId: id,
      state: "dead_letter",
      reason,
      attempts: [{ at: minutesAgo(10), status, errorClass: status >= 500 ? "http_5xx" : "http_4xx", outcome: "dead_letter", ms: 50, excerpt }],
    });
  };
  for (let i = 0; i < 3; i++) await dead("sub_maple", `evt_m${i}`, 422, "permanent", '{"error":"missing field term_id"}');
  await dead("sub_linc", "evt_l0", 400, "permanent", "bad grade scale");
  await dead("sub_linc", "evt_l1", 503, "exhausted", "Service Unavailable");
  // A paused subscription's dead letters are held back from the redrive, and so from its warning.
  await dead("sub_paused", "evt_p0", 422, "permanent", "nope");
});
afterAll(async () => db?.close());

describe("the redrive preview's permanent rejections", () => {
  it("counts them among the matches and names who answered what, most first", async () => {
    const p = await previewRedrive(db.prisma, { filter: {} });
    expect(p.matched).toBe(5);
    expect(p.permanent).toEqual({
      count: 4,
      answers: [
        { subscriptionId: "sub_maple", subscriptionName: "Maple Grove Public Schools", statusCode: 422, count: 3, excerpt: '{"error":"missing field term_id"}' },
        { subscriptionId: "sub_linc", subscriptionName: "Lincoln USD", statusCode: 400, count: 1, excerpt: "bad grade scale" },
      ],
    });
  });

  it("follows the filter and the caller's district; none when none is permanent", async () => {
    expect((await previewRedrive(db.prisma, { filter: { deadLetterReason: "exhausted" } })).permanent).toEqual({ count: 0, answers: [] });
    expect((await previewRedrive(db.prisma, { filter: { subscriptionId: "sub_linc" } })).permanent).toMatchObject({ count: 1, answers: [{ statusCode: 400 }] });
    const lincoln = await previewRedrive(db.prisma, { filter: {}, scope: { tenantId: "lincoln" } });
    expect(lincoln.permanent.answers.map((a) => a.subscriptionId)).toEqual(["sub_linc"]);
  });
});
