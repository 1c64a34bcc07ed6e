// The test-send limit (10 per subscription per minute) must hold for a
// parallel burst: counting, sending and then recording let every request of a
// burst pass the count before any was recorded. 20 at once against a real
// receiver: at most 10 reach it, the rest are 429s that send nothing, and the
// record holds exactly the ones sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/worker-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as testRoute from "../../app/api/v1/subscriptions/[id]/test/route";

let db: TestDb;
let manager: string;
let receiver: Receiver;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  // A slow endpoint widens the window between the count and the record, as a real one would.
  receiver = await startReceiver(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 300));
    res.statusCode = 204;
    res.end();
  });
  const r = await call(subs.POST, { token: manager, body: { id: "sub_burst", name: "Burst", url: receiver.url, eventTypes: ["assignment.graded"], tenant: "lincoln" } });
  expect(r.status, r.text).toBe(201);
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

describe("test sends under a parallel burst", () => {
  it("20 at once: exactly 10 reach the receiver, the others are 429s, and test_sends records exactly what was sent", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => call(testRoute.POST, { token: manager, params: { id: "sub_burst" }, body: {} })));
    const statuses = results.map((r) => r.status);
    const sent = receiver.received.filter((x) => x.headers["hookledger-test"] === "1").length;
    // Exactly the limit: not more (the limit holds under a burst), and not fewer (a burst that saw each other's
    // reservations once refused them all).
    expect(sent, JSON.stringify(statuses)).toBe(10);
    expect(statuses.filter((s) => s === 200).length).toBe(sent);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    const { rows } = await db.pool.query(`SELECT status_code FROM test_sends WHERE subscription_id = 'sub_burst'`);
    expect(rows).toHaveLength(sent);
    expect(rows.every((r) => r.status_code === 204)).toBe(true);
    const audit = await db.pool.query(`SELECT count(*)::int AS n FROM audit_entries WHERE action = 'subscription.test' AND target_id = 'sub_burst'`);
    expect(audit.rows[0].n).toBe(sent);
  });
});
