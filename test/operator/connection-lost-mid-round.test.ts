// A worker's background round holds a client checked out of its pool across several statements. When the server ends
// that connection between two of them (a Postgres restart sends FATAL 57P01 to every backend at once), node-postgres
// reports it as an 'error' event on the idle client; unheard, that event ends the process. The chaos suite saw a worker
// die so in the notification ingest's round. Here the connection is ended at exactly that point, every time: the round
// must fail like any failed statement (the loop retries it), the process must live on, and the pool must serve the next.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { ingestRound } from "../../lib/notify/ingest";
import { ensurePartitions } from "../../lib/ledger/sql/partitions";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

/**
 * A pool whose next checked-out client has its backend terminated right after its first statement, and is then left
 * idle long enough for the server's goodbye to arrive before the round's next statement.
 */
function poolThatLosesItsClient(pool: pg.Pool): { pool: pg.Pool; killed: () => number } {
  let killed = 0;
  const wrapped = new Proxy(pool, {
    get(target, prop) {
      if (prop !== "connect") {
        // Bound to the pool itself: its own query() checks a client out through its own connect(), not this one.
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      }
      return async () => {
        const client = await target.connect();
        const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
        let first = true;
        (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
          const out = await query(...args);
          if (first) {
            first = false;
            const pid = (client as unknown as { processID: number }).processID;
            await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
            killed++;
            await sleep(300); // the FATAL reaches the idle client now, between statements
          }
          return out;
        };
        return client;
      };
    },
  });
  return { pool: wrapped, killed: () => killed };
}

describe("a connection ended between two statements of a background round", () => {
  /** Runs `round` on a pool that loses its client mid-round: it must fail, and nothing may reach uncaughtException. */
  async function failsAlive(round: (pool: pg.Pool) => Promise<unknown>): Promise<void> {
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on("uncaughtException", onUncaught);
    try {
      const lossy = poolThatLosesItsClient(db.pool);
      await expect(round(lossy.pool)).rejects.toThrow();
      expect(lossy.killed()).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  }

  it("the notification ingest's round fails, the process lives on, and the next round runs", async () => {
    await failsAlive(ingestRound);
    // The broken client was not handed back to the pool: the next round gets a working one.
    expect(await ingestRound(db.pool)).toMatchObject({ events: expect.any(Number) });
  });

  it("so does the partition keeper's", async () => {
    // A month far ahead, so there is a partition to make (each in its own transaction on a checked-out client).
    const month = { now: new Date("2031-03-01T00:00:00Z"), from: new Date("2031-03-01T00:00:00Z"), ahead: 0 };
    await failsAlive((pool) => ensurePartitions(pool, month));
    expect(await ensurePartitions(db.pool, month)).toContain("events_p2031_03");
  });
});
