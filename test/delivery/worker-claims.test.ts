// The claim token: a result lands only on the claim it belongs to. Found by the
// fault-injection suite: with leases expired early, the reaper returned a row
// to due, the same worker claimed it again, and the first (stale) send's result
// was applied to the second claim, so two results were written for one claim.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, delivered, seedEvents } from "../helpers/worker-helpers";
import { abandonLeases } from "../../lib/ledger/sql/abandon-leases";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { releaseUnsent } from "../../lib/ledger/sql/release-unsent";
import { writeAndClaim } from "../../lib/ledger/sql/write-and-claim";
import { writeResults, type AttemptResult } from "../../lib/ledger/sql/write-results";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await createSub(db.pool, { id: "sub_claims", url: "http://127.0.0.1:9/hooks" });
  await seedEvents(db.pool, "evt_claim", 1, ["sub_claims"]);
  await createSub(db.pool, { id: "sub_claims_batch", url: "http://127.0.0.1:9/hooks" });
  await seedEvents(db.pool, "evt_claim_batch", 1, ["sub_claims_batch"]);
});
afterAll(async () => db?.close());

const claimOpts = { owner: "w1", limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: ["sub_claims_batch"] };

describe("claim tokens", () => {
  it("a stale result of an earlier claim by the same worker is discarded; the current claim's result applies", async () => {
    const [first] = await claimDeliveries(db.pool, claimOpts);
    expect(first).toBeDefined();
    // The lease runs out while the request is still on the wire; the reaper returns the row.
    await db.pool.query("UPDATE deliveries SET lease_until = now() - interval '1 second' WHERE id = $1", [first.id]);
    expect((await abandonLeases(db.pool, { errorClass: "lease_expired" })).map((r) => r.id)).toEqual([first.id]);
    // A reaped row waits out its backoff (test/delivery/poison.test.ts); here it is due again at once.
    await db.pool.query("UPDATE deliveries SET next_attempt_at = now() WHERE id = $1", [first.id]);
    const [second] = await claimDeliveries(db.pool, claimOpts);
    expect(second.id).toBe(first.id);
    expect(second.claimToken).not.toBe(first.claimToken);

    // The first send's result arrives late: same owner, same row, old claim.
    expect(await writeResults(db.pool, "w1", [delivered(first)])).toEqual([]);
    const mid = await db.pool.query("SELECT state FROM deliveries WHERE id = $1", [first.id]);
    expect(mid.rows[0].state).toBe("in_flight");
    // Shutdown release of the stale claim does nothing either.
    expect(await releaseUnsent(db.pool, "w1", [{ id: first.id, eventAt: first.eventAt, prevState: "pending", claimToken: first.claimToken }])).toBe(0);

    expect((await writeResults(db.pool, "w1", [delivered(second)])).map((r) => r.id)).toEqual([second.id]);
    const { rows: attempts } = await db.pool.query("SELECT attempt_number, outcome FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number", [first.id]);
    expect(attempts).toEqual([
      { attempt_number: 1, outcome: "abandoned" },
      { attempt_number: 2, outcome: "delivered" },
    ]);
  });

  it("a stale result and the current claim's result in one batch write one attempt, not two", async () => {
    // Found by CI's chaos run: both sends of a reaped-and-reclaimed row answered 2xx and were
    // written in the same batch; the attempt insert joined results by delivery id, so the
    // stale result was recorded as a second delivered attempt beside the current one.
    const opts = { ...claimOpts, excludeSubscriptions: ["sub_claims"] };
    const [first] = await claimDeliveries(db.pool, opts);
    await db.pool.query("UPDATE deliveries SET lease_until = now() - interval '1 second' WHERE id = $1", [first.id]);
    await abandonLeases(db.pool, { errorClass: "lease_expired" });
    await db.pool.query("UPDATE deliveries SET next_attempt_at = now() WHERE id = $1", [first.id]);
    const [second] = await claimDeliveries(db.pool, opts);
    expect(second.id).toBe(first.id);

    const stale = { ...delivered(first), durationMs: 111 };
    const current = { ...delivered(second), durationMs: 222 };
    for (const batch of [
      [stale, current],
      [current, stale],
    ]) {
      await db.pool.query("DELETE FROM attempts WHERE delivery_id = $1 AND outcome = 'delivered'", [first.id]);
      await db.pool.query("UPDATE deliveries SET state = 'in_flight', lease_owner = 'w1', leased_at = $2::timestamptz WHERE id = $1", [first.id, second.claimToken]);
      expect(await writeResults(db.pool, "w1", batch)).toEqual([current]);
      const { rows } = await db.pool.query("SELECT outcome, duration_ms FROM attempts WHERE delivery_id = $1 AND outcome = 'delivered'", [first.id]);
      expect(rows).toEqual([{ outcome: "delivered", duration_ms: 222 }]);
    }
  });
});

describe("write and claim in one statement", () => {
  const claim = (answered: string[]) => ({ limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [], answered });
  const counts = async (sub: string) =>
    (
      await db.pool.query(
        `SELECT c.state, c.n::int AS counted, (SELECT count(*)::int FROM deliveries d WHERE d.subscription_id = $1 AND d.state = c.state) AS actual
           FROM (SELECT state, sum(n) AS n FROM delivery_state_counts WHERE subscription_id = $1 GROUP BY state HAVING sum(n) <> 0) c ORDER BY 1`,
        [sub],
      )
    ).rows;
  const only = async (sub: string) => {
    // The other describe's subscriptions are left out of these claims.
    await db.pool.query("UPDATE subscriptions SET state = 'paused' WHERE id <> $1 AND state = 'active'", [sub]);
  };

  it("writes the answered rows and claims the room they free, with one attempt each and the state counts kept", async () => {
    await createSub(db.pool, { id: "sub_cycle", url: "http://127.0.0.1:9/hooks", maxConcurrency: 1 });
    await seedEvents(db.pool, "evt_cycle", 3, ["sub_cycle"]);
    await only("sub_cycle");
    const [a] = await claimDeliveries(db.pool, { owner: "w1", ...claim([]) });
    expect(a).toBeDefined();

    // Its one slot is held by a, and a's answer is in: the same statement writes it and claims the next row.
    const one = await writeAndClaim(db.pool, "w1", [delivered(a)], claim([a.id]));
    expect(one.applied.map((r) => r.id)).toEqual([a.id]);
    expect(one.claimed).toHaveLength(1);
    const b = one.claimed[0];
    expect(b.id).not.toBe(a.id);
    expect(b.payload).toBeInstanceOf(Buffer);
    expect(typeof b.claimToken).toBe("string");

    // b's answer is in, but the claim is not told so: the snapshot still shows b in flight, so the slot is full.
    const two = await writeAndClaim(db.pool, "w1", [delivered(b)], claim([]));
    expect(two.applied.map((r) => r.id)).toEqual([b.id]);
    expect(two.claimed).toEqual([]);

    const { rows } = await db.pool.query(
      "SELECT d.state, count(a.id)::int AS attempts FROM deliveries d LEFT JOIN attempts a ON a.delivery_id = d.id WHERE d.subscription_id = 'sub_cycle' GROUP BY d.id, d.state ORDER BY 1",
    );
    expect(rows).toEqual([
      { state: "delivered", attempts: 1 },
      { state: "delivered", attempts: 1 },
      { state: "pending", attempts: 0 },
    ]);
    // Both updates of deliveries in one statement reach the statement-level counting trigger.
    for (const c of await counts("sub_cycle")) expect(c.counted).toBe(c.actual);
    expect((await counts("sub_cycle")).map((c) => c.state)).toEqual(["delivered", "pending"]);
  });

  it("a 429 with Retry-After holds the subscription for every worker's claim until then; a 429 without one does not", async () => {
    await createSub(db.pool, { id: "sub_cycle_429", url: "http://127.0.0.1:9/hooks", maxConcurrency: 1 });
    await seedEvents(db.pool, "evt_cycle_429", 4, ["sub_cycle_429"]);
    await only("sub_cycle_429");
    const [a] = await claimDeliveries(db.pool, { owner: "w1", ...claim([]) });
    const limited: AttemptResult = {
      ...delivered(a),
      state: "scheduled",
      nextAttemptAt: new Date(Date.now() - 1000),
      statusCode: 429,
      errorClass: "http_429",
      retryAfterSeconds: 120,
    };
    // w1 writes the 429 in its cycle (its claim there cannot see the hold, one snapshot: the worker's own hold covers
    // that, so this one claims elsewhere).
    await writeAndClaim(db.pool, "w1", [limited], { ...claim([a.id]), excludeSubscriptions: ["sub_cycle_429"] });
    const held = (await db.pool.query("SELECT held_until > now() + interval '110 seconds' AS ahead FROM subscriptions WHERE id = 'sub_cycle_429'")).rows[0];
    expect(held.ahead).toBe(true);
    // Another worker, after the commit: its room is free and rows are due, and it claims nothing there.
    expect(await claimDeliveries(db.pool, { owner: "w2", ...claim([]) })).toEqual([]);
    expect((await writeAndClaim(db.pool, "w2", [], claim([]))).claimed).toEqual([]);
    // Once the time is up, it does. A shorter Retry-After meanwhile does not pull a hold nearer.
    await db.pool.query("UPDATE subscriptions SET held_until = now() - interval '1 second' WHERE id = 'sub_cycle_429'");
    const [b] = await claimDeliveries(db.pool, { owner: "w2", ...claim([]) });
    expect(b).toBeDefined();
    await writeResults(db.pool, "w2", [{ ...limited, id: b.id, eventAt: b.eventAt, claimToken: b.claimToken, retryAfterSeconds: null }]);
    expect((await db.pool.query("SELECT held_until < now() AS past FROM subscriptions WHERE id = 'sub_cycle_429'")).rows[0].past).toBe(true);
    const [c] = await claimDeliveries(db.pool, { owner: "w2", ...claim([]) });
    expect(c).toBeDefined();
  });

  it("a batch holding a 410 disables the subscription and claims nothing in the same statement", async () => {
    await createSub(db.pool, { id: "sub_cycle_gone", url: "http://127.0.0.1:9/hooks" });
    await seedEvents(db.pool, "evt_cycle_gone", 3, ["sub_cycle_gone"]);
    await only("sub_cycle_gone");
    const [a] = await claimDeliveries(db.pool, { owner: "w1", ...claim([]), limit: 1 });
    const gone: AttemptResult = { ...delivered(a), state: "dead_letter", statusCode: 410, errorClass: "http_4xx", deadLetterReason: "gone" };
    const out = await writeAndClaim(db.pool, "w1", [gone], claim([a.id]));
    expect(out).toEqual({ applied: [gone], claimed: [] });
    const { rows } = await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_cycle_gone'");
    expect(rows[0].state).toBe("disabled");
    expect((await writeAndClaim(db.pool, "w1", [], claim([]))).claimed).toEqual([]);
  });
});
