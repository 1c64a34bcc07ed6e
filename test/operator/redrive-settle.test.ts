// A done batch whose deliveries are still on their way: the Redrives list says so (as the batch's page does), and the
// pacer settles the batch once none is, after which the list no longer counts its items. A cancelled batch too: the
// cancel stops the pacer moving more items, not the deliveries it already moved. The settle rounds look at a few done
// or cancelled batches at a time, in turn, and never at a running one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";
import * as redrives from "../../app/api/v1/redrives/route";
import * as dashboardRedrives from "../../app/api/v1/dashboard/redrives/route";
import * as redriveOne from "../../app/api/v1/redrives/[id]/route";
import * as cancel from "../../app/api/v1/redrives/[id]/cancel/route";
import { startRedrivePacer, type RedrivePacer } from "../../worker/redrive-pacer";
import { settleFinishedBatches } from "../../lib/ledger/sql/recover";

let db: TestDb;
let engineer: string;
let support: string;
const pacers: RedrivePacer[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  for (const id of ["sub_settle", "sub_turn", "sub_cancel"]) await seedSubscription(db, id);
});
afterAll(async () => {
  for (const p of pacers) await p.stop();
  await db?.close();
});

/** A pacer whose loop never ticks by itself: the test ticks it. */
function pacer(): RedrivePacer {
  const p = startRedrivePacer({ pool: db.pool, intervalMs: 3_600_000 });
  pacers.push(p);
  return p;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A batch of the subscription's dead letters, stepped by `p` until it is done (every item back in the queue). */
async function doneBatch(p: RedrivePacer, subscriptionId: string, prefix: string, n: number): Promise<{ id: string; deliveries: string[] }> {
  const deliveries = await seedDeadLetters(db, { subscriptionId, n, prefix });
  const r = await call(redrives.POST, { token: engineer, body: { reason: `INC-${prefix}`, ratePerSecond: 5_000, filter: { subscriptionId } } });
  expect(r.status, r.text).toBe(201);
  for (let i = 0; i < 100; i++) {
    await p.tick();
    if ((await db.pool.query("SELECT status FROM redrive_batches WHERE id = $1", [r.json.id])).rows[0].status === "done") break;
    await sleep(20);
  }
  return { id: r.json.id, deliveries };
}

const listed = async (id: string, route = redrives.GET) => {
  const r = await call(route, { token: support, path: "/api/v1/redrives?limit=100" });
  expect(r.status, r.text).toBe(200);
  return r.json.items.find((b: { id: string }) => b.id === id);
};

describe("a done batch whose deliveries are still on their way", () => {
  it("is listed with what is still on its way, as its page counts it, until the pacer settles it", async () => {
    const p = pacer();
    const b = await doneBatch(p, "sub_settle", "evt_settle_", 6);
    // Every item is back in the queue and no worker sends here: all six are pending.
    const page = (await call(redriveOne.GET, { token: support, params: { id: b.id } })).json;
    expect(page).toMatchObject({ status: "done", inProgress: 6, settledAt: null });
    expect(await listed(b.id)).toMatchObject({ status: "done", inProgress: 6, settledAt: null });
    expect(await listed(b.id, dashboardRedrives.GET)).toMatchObject({ status: "done", inProgress: 6, settledAt: null });

    // Two answered, one dead-lettered again, three still on their way (one retrying, one being sent, one queued).
    await db.pool.query(
      `UPDATE deliveries d SET state = x.state, delivered_at = CASE WHEN x.state = 'delivered' THEN now() END,
              dead_letter_reason = CASE WHEN x.state = 'dead_letter' THEN 'permanent' END,
              dead_lettered_at = CASE WHEN x.state = 'dead_letter' THEN now() END
         FROM unnest($1::text[], $2::text[]) x(id, state) WHERE d.id = x.id`,
      [b.deliveries, ["delivered", "delivered", "dead_letter", "scheduled", "in_flight", "pending"]],
    );
    expect(await listed(b.id)).toMatchObject({ inProgress: 3, settledAt: null });
    // A new pacer's first tick is a settle round: three still on their way, so not settled.
    await pacer().tick();
    // Not settled; the next look starts at the last item whose delivery it found on its way (those after it are done with).
    const { rows } = await db.pool.query(
      `SELECT b.settled_at, b.settle_seq,
              (SELECT max(i.seq) FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id
                WHERE i.batch_id = b.id AND d.state IN ('pending', 'in_flight', 'scheduled')) AS last_on_way
         FROM redrive_batches b WHERE b.id = $1`,
      [b.id],
    );
    expect(rows[0]).toMatchObject({ settled_at: null, settle_seq: rows[0].last_on_way });
    expect(rows[0].last_on_way).toBeGreaterThan(0);

    await db.pool.query(
      `UPDATE deliveries SET state = 'delivered', delivered_at = now(), lease_owner = NULL, lease_until = NULL WHERE id = ANY($1::text[]) AND state <> 'dead_letter'`,
      [b.deliveries],
    );
    expect(await listed(b.id)).toMatchObject({ inProgress: 0, settledAt: null });
    await pacer().tick();
    const settled = await listed(b.id);
    expect(settled).toMatchObject({ status: "done", inProgress: 0, settledAt: expect.any(String) });

    // Settled, the list no longer counts it, though one of its deliveries was since sent again by someone else: its page does.
    await db.pool.query(`UPDATE deliveries SET state = 'pending', delivered_at = NULL WHERE id = $1`, [b.deliveries[0]]);
    expect(await listed(b.id)).toMatchObject({ inProgress: 0, settledAt: settled.settledAt });
    expect((await call(redriveOne.GET, { token: support, params: { id: b.id } })).json).toMatchObject({ inProgress: 1 });
  });

  it("a running batch is listed with inProgress null and is never settled", async () => {
    const deliveries = await seedDeadLetters(db, { subscriptionId: "sub_turn", n: 3, prefix: "evt_run_" });
    expect(deliveries).toHaveLength(3);
    const r = await call(redrives.POST, { token: engineer, body: { reason: "INC-run", ratePerSecond: 1, filter: { subscriptionId: "sub_turn" } } });
    expect(r.status, r.text).toBe(201);
    expect(await listed(r.json.id)).toMatchObject({ status: "running", inProgress: null, settledAt: null });
    expect((await settleFinishedBatches(db.pool, { after: null, limit: 100 })).looked.map((l) => l.id)).not.toContain(r.json.id);
    // Cancelled before it moved anything (nothing here ticks a pacer), it has nothing on its way and settles at its
    // first look, so it is not in the later rounds below.
    expect((await call(cancel.POST, { token: engineer, params: { id: r.json.id } })).status).toBe(200);
    expect(await listed(r.json.id)).toMatchObject({ status: "cancelled", redriven: 0, inProgress: 0, settledAt: null });
    expect((await settleFinishedBatches(db.pool, { after: null, limit: 100 })).looked).toContainEqual(expect.objectContaining({ id: r.json.id, settled: true }));
  });

  it("a cancelled batch is listed with the deliveries it moved before the cancel still on their way, and settled once they are done", async () => {
    const deliveries = await seedDeadLetters(db, { subscriptionId: "sub_cancel", n: 6, prefix: "evt_cancel_" });
    const r = await call(redrives.POST, { token: engineer, body: { reason: "INC-cancel", ratePerSecond: 2, filter: { subscriptionId: "sub_cancel" } } });
    expect(r.status, r.text).toBe(201);
    // At 2 a second, the first tick with budget moves one or two of the six; then the engineer cancels it.
    const p = pacer();
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      await p.tick();
      if ((await db.pool.query("SELECT redriven FROM redrive_batches WHERE id = $1", [r.json.id])).rows[0].redriven > 0) break;
    }
    const c = await call(cancel.POST, { token: engineer, params: { id: r.json.id }, body: { reason: "the district's endpoint is struggling" } });
    expect(c.status, c.text).toBe(200);
    const moved: number = c.json.redriven;
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(6);
    // No worker sends here: every moved delivery is still queued, and the list counts them as the batch's page does.
    expect(await listed(r.json.id)).toMatchObject({ status: "cancelled", inProgress: moved, settledAt: null });
    expect(await listed(r.json.id, dashboardRedrives.GET)).toMatchObject({ status: "cancelled", inProgress: moved, settledAt: null });
    expect((await call(redriveOne.GET, { token: support, params: { id: r.json.id } })).json).toMatchObject({ status: "cancelled", inProgress: moved });
    await pacer().tick();
    expect(await listed(r.json.id)).toMatchObject({ inProgress: moved, settledAt: null });

    // The moved ones answered (one dead-lettered again); those the cancel left dead-lettered never were on their way.
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT d.id FROM redrive_batch_items i JOIN deliveries d ON d.id = i.delivery_id WHERE i.batch_id = $1 AND d.state = 'pending' ORDER BY i.seq`,
      [r.json.id],
    );
    expect(rows).toHaveLength(moved);
    expect(deliveries).toEqual(expect.arrayContaining(rows.map((x) => x.id)));
    await db.pool.query(`UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE id = ANY($1::text[])`, [rows.slice(1).map((x) => x.id)]);
    await db.pool.query(`UPDATE deliveries SET state = 'dead_letter', dead_letter_reason = 'permanent', dead_lettered_at = now() WHERE id = $1`, [rows[0].id]);
    await pacer().tick();
    expect(await listed(r.json.id)).toMatchObject({ status: "cancelled", inProgress: 0, settledAt: expect.any(String) });
  });

  it("settle rounds look at a few done batches at a time, in turn from where the last stopped, then from the first again", async () => {
    const p = pacer();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await doneBatch(p, "sub_turn", `evt_turn${i}_`, 2)).id);
    // None settles: their deliveries are all pending. Only these three are done and unsettled.
    const first = await settleFinishedBatches(db.pool, { after: null, limit: 2 });
    expect(first.looked.map((l) => [l.id, l.settled])).toEqual([
      [ids[0], false],
      [ids[1], false],
    ]);
    const last = first.looked[1];
    const second = await settleFinishedBatches(db.pool, { after: { at: last.at, id: last.id }, limit: 2 });
    expect(second.looked.map((l) => [l.id, l.settled])).toEqual([[ids[2], false]]);
    // The third's deliveries all answered: it settles on its turn, and the first round again looks at the other two.
    await db.pool.query(`UPDATE deliveries d SET state = 'delivered', delivered_at = now() FROM redrive_batch_items i WHERE i.batch_id = $1 AND d.id = i.delivery_id`, [
      ids[2],
    ]);
    expect((await settleFinishedBatches(db.pool, { after: { at: last.at, id: last.id }, limit: 2 })).looked).toEqual([
      expect.objectContaining({ id: ids[2], settled: true }),
    ]);
    expect((await settleFinishedBatches(db.pool, { after: null, limit: 5 })).looked.map((l) => l.id)).toEqual([ids[0], ids[1]]);
  });
});
