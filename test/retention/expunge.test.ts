// Payload expunge by age on a real Postgres: with HOOKLEDGER_PAYLOAD_RETENTION_DAYS
// set, a retention run turns the payloads and subject values of events older
// than it, whose deliveries are all finished, into the 'expunged' tombstone and
// keeps the delivery records (key, times, statuses, status codes); events that
// are recent, or that a pending, scheduled or dead-lettered delivery still
// needs, keep their bytes. The timeline says "Payload expunged on <date>"; a
// redrive, resend or test send of an expunged delivery's event is a 409 that
// sends nothing, and so is a test send of an erased event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { daysAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import * as retentionRun from "../../app/api/v1/retention/run/route";
import * as retention from "../../app/api/v1/retention/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as resend from "../../app/api/v1/deliveries/[id]/resend/route";
import * as testSend from "../../app/api/v1/subscriptions/[id]/test/route";
import * as erasures from "../../app/api/v1/erasures/route";
import { rollupAttemptStats } from "../../lib/rollups/sampler";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";

let db: TestDb;
let admin: string;
let engineer: string;
const ids: Record<string, string> = {};

async function seed(id: string, ageDays: number, state: "delivered" | "resolved" | "dead_letter" | "scheduled" | "pending") {
  await seedEvent(db.pool, { id, createdAt: daysAgo(ageDays), subject: { tenant: "lincoln", studentId: `stu_${id}` } });
  const at = daysAgo(ageDays);
  const attempts =
    state === "pending"
      ? []
      : [
          {
            at,
            outcome: state === "delivered" ? ("delivered" as const) : ("dead_letter" as const),
            status: state === "delivered" ? 200 : 422,
            excerpt: `echo of stu_${id}`,
          },
        ];
  const did = await seedDelivery(db.pool, { subscriptionId: "sub_lin", eventId: id, state: state === "resolved" ? "dead_letter" : state, attempts });
  if (state === "resolved")
    await db.pool.query(
      `UPDATE deliveries SET state = 'resolved', resolution = 'discarded', resolved_at = $2, resolved_by = 'user:ops@example.test', resolution_reason = 'not needed' WHERE id = $1`,
      [did, at],
    );
  ids[id] = did;
}

const event = async (id: string) =>
  (await db.pool.query("SELECT payload, subject, subject_values, content_hash, tombstone, tombstoned_at, erasure_id FROM events WHERE id = $1", [id])).rows[0];

/** A retention run through the API (answered 202 as it starts), to its end: its record as GET lists it. */
async function runToEnd() {
  const r = await call(retentionRun.POST, { token: admin, body: {} });
  expect(r.status, r.text).toBe(202);
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((res) => setTimeout(res, 50))) {
    const run = (await call(retention.GET, { token: admin })).json.runs.find((x: { id: string }) => x.id === r.json.id);
    if (run && run.status !== "running") return run;
  }
  throw new Error(`retention run ${r.json.id} did not finish in 30 s`);
}

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  engineer = await tokenFor(db.prisma, "engineer");
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  await seed("evt_40_delivered", 40, "delivered");
  await seed("evt_40_resolved", 40, "resolved");
  await seed("evt_40_dead", 40, "dead_letter");
  await seed("evt_40_scheduled", 40, "scheduled");
  await seed("evt_40_pending", 40, "pending");
  await seed("evt_10_delivered", 10, "delivered");
  await seed("evt_erased", 5, "delivered");
  await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
});

afterAll(async () => {
  delete process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS;
  await db?.close();
});

describe("payload expunge", () => {
  it("a dry run counts the events it would expunge and changes nothing", async () => {
    process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS = "30";
    const before = await event("evt_40_delivered");
    const r = await call(retentionRun.POST, { token: admin, body: { dryRun: true } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ expunged: 2, deliveries: 0, events: 0 });
    expect(await event("evt_40_delivered")).toEqual(before);
  });

  it("tombstones old events whose deliveries are finished; keeps the delivery records; leaves recent and still-needed events alone", async () => {
    process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS = "30";
    const deliveriesBefore = (await db.pool.query("SELECT id, delivery_key, state, created_at, delivered_at, resolved_at, last_status_code FROM deliveries ORDER BY id"))
      .rows;
    const run = await runToEnd();
    expect(run).toMatchObject({ status: "finished", expunged: 2, deliveries: 0, events: 0, attempts: 0 });

    for (const id of ["evt_40_delivered", "evt_40_resolved"]) {
      const e = await event(id);
      expect(e.tombstone).toBe("expunged");
      expect(e.erasure_id).toBeNull();
      expect(e.tombstoned_at).toBeInstanceOf(Date);
      expect(Buffer.from(e.payload).toString()).toBe('{"expunged":true}');
      expect(e.subject).toEqual({ expunged: true });
      expect(e.subject_values).toEqual([]);
      expect(e.content_hash).toBeNull();
      // What a receiver answered may echo the payload: gone too.
      const a = (await db.pool.query("SELECT response_excerpt, error_message, status_code FROM attempts WHERE delivery_id = $1", [ids[id]])).rows;
      expect(a.every((x) => x.response_excerpt === null && x.error_message === null)).toBe(true);
      expect(a.map((x) => x.status_code)).toEqual([id.endsWith("delivered") ? 200 : 422]);
    }
    for (const id of ["evt_40_dead", "evt_40_scheduled", "evt_40_pending", "evt_10_delivered"]) {
      const e = await event(id);
      expect(e.tombstone, id).toBeNull();
      expect(Buffer.from(e.payload).toString()).toContain(id);
    }
    // Every delivery record is as it was: key, state, times, status code.
    expect((await db.pool.query("SELECT id, delivery_key, state, created_at, delivered_at, resolved_at, last_status_code FROM deliveries ORDER BY id")).rows).toEqual(
      deliveriesBefore,
    );
    // The record counts it; the lookup no longer finds the student.
    expect((await db.pool.query("SELECT events_expunged FROM retention_runs WHERE id = $1", [run.id])).rows[0].events_expunged).toBe(2);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM events WHERE subject_values @> ARRAY['studentId:stu_evt_40_delivered']")).rows[0].n).toBe(0);
  });

  it("the timeline says when the payload was expunged", async () => {
    const d = await getDeliveryDetail({ id: ids.evt_40_delivered }, db.pool);
    const today = new Date().toISOString().slice(0, 10);
    expect(d.history.map((h) => h.reason)).toContainEqual(expect.stringMatching(new RegExp(`^Payload expunged on ${today}`)));
    const live = await getDeliveryDetail({ id: ids.evt_10_delivered }, db.pool);
    expect(live.history.some((h) => /expunged/.test(h.reason ?? ""))).toBe(false);
  });

  it("a redrive, resend or test send of an expunged delivery is a 409 that says so; nothing moves", async () => {
    const before = (await db.pool.query("SELECT id, state, updated_at FROM deliveries ORDER BY id")).rows;
    const redrive = await call(redriveOne.POST, { token: engineer, params: { id: ids.evt_40_resolved }, body: { reason: "INC-1 try again" } });
    expect(redrive.status).toBe(409);
    expect(redrive.json.error.message).toMatch(/cannot be redriven: its payload was expunged on/);
    const again = await call(resend.POST, { token: engineer, params: { id: ids.evt_40_delivered }, body: { reason: "INC-1 try again" } });
    expect(again.status).toBe(409);
    expect(again.json.error.message).toMatch(/its payload was expunged on/);
    const test = await call(testSend.POST, { token: admin, params: { id: "sub_lin" }, body: { eventId: "evt_40_delivered" } });
    expect(test.status).toBe(409);
    expect(test.json.error.message).toMatch(/Event evt_40_delivered cannot be sent as a test: its payload was expunged on .*Nothing is left to send/);
    expect((await db.pool.query("SELECT id, state, updated_at FROM deliveries ORDER BY id")).rows).toEqual(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM test_sends")).rows[0].n).toBe(0);
  });

  it("a test send of an erased event is refused too (it would have sent the tombstone)", async () => {
    const e = await call(erasures.POST, { token: admin, body: { subject: { studentId: "stu_evt_erased" }, reason: "records request 77" } });
    expect(e.status, e.text).toBe(200);
    const test = await call(testSend.POST, { token: admin, params: { id: "sub_lin" }, body: { eventId: "evt_erased" } });
    expect(test.status).toBe(409);
    expect(test.json.error.message).toMatch(/Event evt_erased cannot be sent as a test: its payload was erased by erasure er_\w+ on /);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM test_sends")).rows[0].n).toBe(0);
  });

  it("a tenant's override may expunge sooner (payload days at most its days); bad values are a 400", async () => {
    delete process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS;
    expect((await call(retention.PUT, { method: "PUT", token: admin, body: { tenant: "lincoln", retentionDays: 20, payloadRetentionDays: 30 } })).status).toBe(400);
    const ok = await call(retention.PUT, { method: "PUT", token: admin, body: { tenant: "lincoln", retentionDays: 60, payloadRetentionDays: 7 } });
    expect(ok.status, ok.text).toBe(200);
    expect(await runToEnd()).toMatchObject({ expunged: 1 });
    expect((await event("evt_10_delivered")).tombstone).toBe("expunged");
    expect((await event("evt_40_dead")).tombstone).toBeNull();
  });
});
