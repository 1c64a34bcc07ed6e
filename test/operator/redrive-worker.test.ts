// Redrive end to end with the real worker (runWorker: the delivery loop and,
// beside it, the redrive pacer) and real node:http receivers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { FAST, attemptsOf, createSub, seedEvents, settled, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as batch from "../../app/api/v1/redrives/[id]/route";

let db: TestDb;
let engineer: string;
let receiver: Receiver;
let answer = 422;

/** The worker process's loop and companions, in-process; stop() is its SIGTERM. */
function startWorkerProcess() {
  const ac = new AbortController();
  const done = runWorker({ databaseUrl: db.url, ...FAST, signal: ac.signal });
  return { stop: async () => (ac.abort(), done) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  receiver = await startReceiver((_req, res) => {
    res.statusCode = answer;
    res.end(answer === 422 ? '{"error":"missing term_id"}' : "");
  });
  await createSub(db.pool, { id: "sub_lincoln", url: receiver.url, maxConcurrency: 50 });
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

const progress = async (id: string) => (await call(batch.GET, { token: engineer, params: { id } })).json;

describe("redrive with the worker", () => {
  it("a 422'd delivery, redriven after the receiver is fixed, is delivered with the same webhook-id; the attempt records trigger redrive and the actor", async () => {
    answer = 422;
    const w = startWorkerProcess();
    try {
      await seedEvents(db.pool, "evt_single_", 1, ["sub_lincoln"]);
      const dead = await settled(db.pool, "sub_lincoln", "evt_single_1");
      expect(dead).toMatchObject({ state: "dead_letter", dead_letter_reason: "permanent", last_status_code: 422 });
      answer = 204; // the district fixed its importer
      const r = await call(redriveOne.POST, { token: engineer, params: { id: dead.id }, body: { reason: "INC-2231 term_id fixed" } });
      expect(r.status, r.text).toBe(200);
      const done = await settled(db.pool, "sub_lincoln", "evt_single_1");
      expect(done.state).toBe("delivered");
      expect(done.attempt_count).toBe(1); // a fresh budget for the redriven run
      const ids = receiver.received.filter((x) => x.id === dead.delivery_key);
      expect(ids).toHaveLength(2);
      expect(ids.map((x) => x.headers["idempotency-key"])).toEqual([dead.delivery_key, dead.delivery_key]);
      expect(ids[0].body.equals(ids[1].body)).toBe(true); // the same bytes
      const attempts = await attemptsOf(db.pool, dead.id);
      expect(attempts.map((a) => [a.trigger, a.actor, a.outcome, a.status_code])).toEqual([
        ["scheduled", null, "dead_letter", 422],
        ["redrive", "token:test-engineer", "delivered", 204],
      ]);
    } finally {
      await w.stop();
    }
  });

  it("a bulk redrive drains through the worker; a worker restart mid-batch does not stop it; each delivered once", async () => {
    answer = 422;
    let w = startWorkerProcess();
    await seedEvents(db.pool, "evt_bulk_", 300, ["sub_lincoln"]);
    await waitFor(
      async () => {
        const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_bulk_%' AND state = 'dead_letter'");
        return rows[0].n === 300;
      },
      30_000,
      "300 dead letters",
    );
    answer = 204;
    const r = await call(redrives.POST, {
      token: engineer,
      body: { reason: "INC-2232", ratePerSecond: 100, filter: { subscriptionId: "sub_lincoln", statusCode: 422 } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.matched).toBe(300);
    await new Promise((res) => setTimeout(res, 1200));
    await w.stop(); // SIGTERM mid-batch
    const mid = await progress(r.json.id);
    expect(mid.status).toBe("running");
    expect(mid.redriven).toBeGreaterThan(0);
    expect(mid.redriven).toBeLessThan(300);
    w = startWorkerProcess(); // the worker comes back
    try {
      const p = await waitFor(
        async () => {
          const x = await progress(r.json.id);
          return x.status === "done" && x.deliveredSince === 300 ? x : null;
        },
        30_000,
        "the batch to finish and deliver",
      );
      expect(p).toMatchObject({ matched: 300, redriven: 300, skipped: 0, failedAgain: 0, inProgress: 0 });
    } finally {
      await w.stop();
    }
    const { rows } = await db.pool.query("SELECT delivery_key FROM deliveries WHERE event_id LIKE 'evt_bulk_%'");
    for (const { delivery_key } of rows) expect(receiver.count(delivery_key)).toBe(2); // the 422, then one success
  });

  it("fresh traffic keeps flowing while a large redrive runs", async () => {
    const fresh = await startReceiver();
    await createSub(db.pool, { id: "sub_fresh", url: fresh.url });
    answer = 422;
    const w = startWorkerProcess();
    try {
      await seedEvents(db.pool, "evt_big_", 3000, ["sub_lincoln"]);
      await waitFor(
        async () => {
          const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_big_%' AND state = 'dead_letter'");
          return rows[0].n === 3000;
        },
        60_000,
        "3000 dead letters",
      );
      answer = 204;
      const r = await call(redrives.POST, { token: engineer, body: { reason: "INC-2233", ratePerSecond: 500, filter: { subscriptionId: "sub_lincoln" } } });
      expect(r.json.matched).toBe(3000);
      const lat: number[] = [];
      for (let i = 0; i < 8; i++) {
        const t = Date.now();
        await seedEvents(db.pool, `evt_fresh_${i}_`, 5, ["sub_fresh"]);
        await settled(db.pool, "sub_fresh", `evt_fresh_${i}_5`, 10_000);
        lat.push(Date.now() - t);
        await new Promise((res) => setTimeout(res, 300));
      }
      const mid = await progress(r.json.id);
      expect(mid.status).toBe("running"); // the fresh events went through during the redrive
      console.log(`fresh delivery latency during a 3,000 redrive at 500/s: max ${Math.max(...lat)} ms, all ${lat.join(", ")}`);
      expect(Math.max(...lat)).toBeLessThan(3000);
      await waitFor(async () => (await progress(r.json.id)).deliveredSince === 3000, 60_000, "the redrive to deliver");
    } finally {
      await w.stop();
      await fresh.close();
    }
  });
});
