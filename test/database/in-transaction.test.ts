// lib/db/client.ts's inTransaction and withTransaction: the one BEGIN/COMMIT/ROLLBACK the ledger's hand-written
// transactions share (the sampler, the notifier's ingest, the redrive pacer, retention, partitions, migrations).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { inTransaction, withTransaction } from "../../lib/db/client";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("CREATE TABLE tx_rows (id int PRIMARY KEY)");
});
afterAll(() => db.close());

const rows = async () => (await db.pool.query<{ id: number }>("SELECT id FROM tx_rows ORDER BY id")).rows.map((r) => r.id);

describe("inTransaction", () => {
  it("commits what fn wrote and returns its value", async () => {
    await db.pool.query("TRUNCATE tx_rows");
    const c = await db.pool.connect();
    try {
      const out = await inTransaction(c, async () => {
        await c.query("INSERT INTO tx_rows VALUES (1), (2)");
        // Inside the transaction: another connection does not see the rows yet.
        expect(await rows()).toEqual([]);
        return "done";
      });
      expect(out).toBe("done");
      expect(await rows()).toEqual([1, 2]);
      expect((await c.query<{ s: string }>("SELECT pg_current_xact_id_if_assigned()::text AS s")).rows[0].s).toBeNull();
    } finally {
      c.release();
    }
  });

  it("rolls back everything fn wrote when it throws, and rethrows that error", async () => {
    await db.pool.query("TRUNCATE tx_rows");
    const c = await db.pool.connect();
    try {
      const failed = inTransaction(c, async () => {
        await c.query("INSERT INTO tx_rows VALUES (1)");
        throw new Error("caller's own failure");
      });
      await expect(failed).rejects.toThrow("caller's own failure");
      expect(await rows()).toEqual([]);
      // The connection is out of the aborted transaction and usable again.
      expect((await c.query<{ n: number }>("SELECT 1 AS n")).rows[0].n).toBe(1);
    } finally {
      c.release();
    }
  });

  it("rolls back a statement's failure: the failed statement's error is what the caller hears", async () => {
    await db.pool.query("TRUNCATE tx_rows");
    await db.pool.query("INSERT INTO tx_rows VALUES (7)");
    const c = await db.pool.connect();
    try {
      const failed = inTransaction(c, async () => {
        await c.query("INSERT INTO tx_rows VALUES (1)");
        await c.query("INSERT INTO tx_rows VALUES (7)");
      });
      await expect(failed).rejects.toMatchObject({ code: "23505" });
      expect(await rows()).toEqual([7]);
    } finally {
      c.release();
    }
  });

  it("keeps fn's error when the ROLLBACK fails too (the connection is gone)", async () => {
    const c = await db.pool.connect();
    const ended = new Promise<void>((r) => c.once("end", () => r()));
    c.on("error", () => {});
    try {
      const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      const failed = inTransaction(c, async () => {
        await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
        await ended;
        throw new Error("fn's own failure");
      });
      // The ROLLBACK on the dead connection fails ("not queryable"); that is not what the caller hears.
      await expect(failed).rejects.toThrow("fn's own failure");
    } finally {
      c.release(true);
    }
  });
});

describe("withTransaction", () => {
  it("returns its client to the pool whether fn returns or throws", async () => {
    await db.pool.query("TRUNCATE tx_rows");
    expect(await withTransaction(db.pool, async (c) => (await c.query("INSERT INTO tx_rows VALUES (3) RETURNING id")).rows[0].id)).toBe(3);
    await expect(
      withTransaction(db.pool, async (c) => {
        await c.query("INSERT INTO tx_rows VALUES (4)");
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(await rows()).toEqual([3]);
    // Nothing is left checked out.
    expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
  });

  it("lets go of a transaction-level advisory lock when fn returns early without writing", async () => {
    const key = 912_345;
    const held = await withTransaction(db.pool, async (c) => (await c.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [key])).rows[0].ok);
    expect(held).toBe(true);
    const { rows: left } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1", [key]);
    expect(left[0].n).toBe(0);
  });
});
