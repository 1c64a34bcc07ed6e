// `hookledger start` takes back the deliveries of a worker it saw exit
// (cli/start.ts returnLeases): reapDeadWorker names that worker by the heartbeat
// it wrote (this host, its pid, a start no earlier than its spawn). An older
// worker whose pid the new process reused, or a worker on another host with
// the same pid, keeps its leases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, seedEvents } from "../helpers/worker-helpers";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { reapDeadWorker } from "../../lib/ledger/sql/abandon-leases";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

const claim = (owner: string, sub: string) =>
  claimDeliveries(db.pool, {
    owner,
    limit: 10,
    perSubscription: 10,
    leaseSlackSeconds: 30,
    excludeSubscriptions: ["sub_dead", "sub_old", "sub_other"].filter((s) => s !== sub),
  });

async function beat(workerId: string, hostname: string, pid: number, startedAgoSeconds: number) {
  await db.pool.query(`INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at) VALUES ($1, $2, $3, now() - make_interval(secs => $4), now())`, [
    workerId,
    hostname,
    pid,
    startedAgoSeconds,
  ]);
}

describe("reapDeadWorker", () => {
  it("takes back the dead worker's leases only, records them as possibly received, and marks its heartbeat stopped", async () => {
    for (const id of ["sub_dead", "sub_old", "sub_other"]) {
      await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks" });
      await seedEvents(db.pool, `evt_${id}_`, 2, [id]);
    }
    await beat("box:4242:dead", "box", 4242, 5); // the process start saw exit
    await beat("box:4242:old", "box", 4242, 3600); // an earlier process that had the same pid (its row never stopped)
    await beat("other:4242:live", "other", 4242, 5); // the same pid on another host
    expect(await claim("box:4242:dead", "sub_dead")).toHaveLength(2);
    expect(await claim("box:4242:old", "sub_old")).toHaveLength(2);
    expect(await claim("other:4242:live", "sub_other")).toHaveLength(2);

    const out = await reapDeadWorker(db.pool, { hostname: "box", pid: 4242, spawnedAt: new Date(Date.now() - 60_000) });
    expect(out.workers).toEqual(["box:4242:dead"]);
    expect(out.reaped.map((r) => r.subscriptionId)).toEqual(["sub_dead", "sub_dead"]);

    const { rows } = await db.pool.query(`SELECT subscription_id, state, count(*)::int AS n FROM deliveries GROUP BY 1, 2 ORDER BY 1`);
    expect(rows).toEqual([
      { subscription_id: "sub_dead", state: "scheduled", n: 2 },
      { subscription_id: "sub_old", state: "in_flight", n: 2 },
      { subscription_id: "sub_other", state: "in_flight", n: 2 },
    ]);
    const attempts = await db.pool.query(`SELECT outcome, error_class, ambiguous, worker_id FROM attempts`);
    expect(attempts.rows).toEqual([0, 1].map(() => ({ outcome: "abandoned", error_class: "lease_expired", ambiguous: true, worker_id: "box:4242:dead" })));
    const hb = await db.pool.query(`SELECT worker_id FROM worker_heartbeats WHERE stopped_at IS NOT NULL`);
    expect(hb.rows).toEqual([{ worker_id: "box:4242:dead" }]);

    // Once more (a second exit report): nothing left to take.
    expect(await reapDeadWorker(db.pool, { hostname: "box", pid: 4242, spawnedAt: new Date(Date.now() - 60_000) })).toEqual({ workers: [], reaped: [] });
  });
});
