// Resend and reopen end to end with the real worker and a real node:http
// receiver: a delivered row sent again arrives with the same webhook-id, the
// same bytes and a fresh, valid Standard Webhooks signature; a resolved row
// redriven later is delivered with the same webhook-id.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { FAST, attemptsOf, createSub, seedEvents, settled, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import * as resend from "../../app/api/v1/deliveries/[id]/resend/route";
import * as resolveOne from "../../app/api/v1/deliveries/[id]/resolve/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";

let db: TestDb;
let engineer: string;
let support: string;
let receiver: Receiver;
let secret: string;
let answer = 204;
let worker: { stop: () => Promise<unknown> };

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  receiver = await startReceiver((_req, res) => {
    res.statusCode = answer;
    res.end(answer === 422 ? '{"error":"missing term_id"}' : "");
  });
  ({
    secrets: [secret],
  } = await createSub(db.pool, { id: "sub_lincoln", url: receiver.url, maxConcurrency: 10 }));
  const ac = new AbortController();
  const done = runWorker({ databaseUrl: db.url, ...FAST, signal: ac.signal });
  worker = { stop: async () => (ac.abort(), done) };
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await db?.close();
});

const deliveredAgain = (id: string) =>
  waitFor(
    async () => {
      const { rows } = await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id]);
      return rows[0].state === "delivered" && rows[0].next_trigger === "scheduled" ? rows[0] : null;
    },
    20_000,
    `${id} delivered again`,
  );

describe("resend", () => {
  it("a delivered row resent reaches the receiver again with the same webhook-id and bytes and a valid fresh signature; the attempt records trigger resend and the actor", async () => {
    answer = 204;
    await seedEvents(db.pool, "evt_resend_", 1, ["sub_lincoln"]);
    const first = await settled(db.pool, "sub_lincoln", "evt_resend_1");
    expect(first.state).toBe("delivered");
    const r = await call(resend.POST, { token: engineer, params: { id: first.id }, body: { reason: "district lost Tuesday's grades, INC-88" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: first.id, state: "pending", deliveryKey: first.delivery_key });
    await deliveredAgain(first.id);
    const got = receiver.received.filter((x) => x.id === first.delivery_key);
    expect(got).toHaveLength(2);
    expect(got[1].headers["idempotency-key"]).toBe(first.delivery_key);
    expect(got[1].body.equals(got[0].body)).toBe(true);
    const h = (g: (typeof got)[number]) => ({
      "webhook-id": String(g.headers["webhook-id"]),
      "webhook-timestamp": String(g.headers["webhook-timestamp"]),
      "webhook-signature": String(g.headers["webhook-signature"]),
    });
    expect(() => new Webhook(secret).verify(got[1].body, h(got[1]))).not.toThrow();
    const attempts = await attemptsOf(db.pool, first.id);
    expect(attempts.map((a) => [a.trigger, a.actor, a.outcome])).toEqual([
      ["scheduled", null, "delivered"],
      ["resend", "token:test-engineer", "delivered"],
    ]);
    const detail = await getDeliveryDetail({ id: first.id }, db.pool);
    expect(detail.history.map((x) => [x.action, x.actor, x.reason])).toEqual([["delivery.resend", "token:test-engineer", "district lost Tuesday's grades, INC-88"]]);
  });

  it("refuses with a 4xx and writes nothing: unknown id 404, a dead letter 409 naming delivered or resolved, empty reason 400, support 403", async () => {
    answer = 422;
    await seedEvents(db.pool, "evt_rs_bad_", 1, ["sub_lincoln"]);
    const dead = await settled(db.pool, "sub_lincoln", "evt_rs_bad_1");
    expect(dead.state).toBe("dead_letter");
    const before = await tableCounts(db.pool);
    const cases: [Promise<{ status: number; json: any }>, number][] = [
      [call(resend.POST, { token: engineer, params: { id: "dlv_nope" }, body: { reason: "INC-1 again" } }), 404],
      [call(resend.POST, { token: engineer, params: { id: dead.id }, body: { reason: "INC-1 again" } }), 409],
      [call(resend.POST, { token: engineer, params: { id: dead.id }, body: { reason: "" } }), 400],
      [call(resend.POST, { token: engineer, params: { id: dead.id }, body: {} }), 400],
      [call(resend.POST, { token: support, params: { id: dead.id }, body: { reason: "INC-1 again" } }), 403],
    ];
    for (const [p, status] of cases) expect((await p).status).toBe(status);
    const wrong = await call(resend.POST, { token: engineer, params: { id: dead.id }, body: { reason: "INC-1 again" } });
    expect(wrong.json.error.details.allowedStates).toEqual(["delivered", "resolved"]);
    expect(wrong.json.error.message).toMatch(/redriven, not resent/);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("a resolved delivery redriven later is delivered with the same webhook-id; its decision is cleared on the row and kept in its timeline", async () => {
    answer = 422;
    await seedEvents(db.pool, "evt_reopen_", 1, ["sub_lincoln"]);
    const dead = await settled(db.pool, "sub_lincoln", "evt_reopen_1");
    expect(dead.state).toBe("dead_letter");
    const res = await call(resolveOne.POST, { token: engineer, params: { id: dead.id }, body: { resolution: "discarded", reason: "term closed, INC-90" } });
    expect(res.status, res.text).toBe(200);
    answer = 204;
    const r = await call(redriveOne.POST, { token: engineer, params: { id: dead.id }, body: { reason: "district asked for it after all, INC-91" } });
    expect(r.status, r.text).toBe(200);
    const done = await deliveredAgain(dead.id);
    expect(done).toMatchObject({ delivery_key: dead.delivery_key, resolution: null, resolved_by: null });
    expect(receiver.received.filter((x) => x.id === dead.delivery_key)).toHaveLength(2);
    const detail = await getDeliveryDetail({ id: dead.id }, db.pool);
    expect(detail.history.map((x) => x.action).sort()).toEqual(["delivery.redrive", "delivery.resolve"]);
  });
});
