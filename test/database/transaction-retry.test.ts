// A transaction PostgreSQL chose as a deadlock victim is rolled back whole and may run again
// (lib/db/retry.ts). The deadlocks here are real: two transactions lock two rows in opposite orders, through pg and
// through Prisma's interactive transactions, so the predicate is checked against the errors each driver really throws.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { isRetryableTransactionError, retryTransaction } from "../../lib/db/retry";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("CREATE TABLE retry_rows (id int PRIMARY KEY, v int NOT NULL)");
});
afterAll(() => db.close());

async function reset() {
  await db.pool.query("TRUNCATE retry_rows");
  await db.pool.query("INSERT INTO retry_rows VALUES (1, 0), (2, 0)");
}

/** Resolves for both sides once both have arrived: each holds its first row's lock before either asks for its second. */
function barrier(parties: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return () => {
    if (++arrived === parties) open();
    return opened;
  };
}

/** One transaction on a pg client: its first row, the barrier (first try only), then its second row. */
function pgSide(first: number, second: number, meet: () => Promise<void>, tries: { n: number }) {
  return async () => {
    const c: pg.PoolClient = await db.pool.connect();
    try {
      tries.n++;
      await c.query("BEGIN");
      try {
        await c.query("UPDATE retry_rows SET v = v + 1 WHERE id = $1", [first]);
        if (tries.n === 1) await meet();
        await c.query("UPDATE retry_rows SET v = v + 1 WHERE id = $1", [second]);
        await c.query("COMMIT");
      } catch (err) {
        await c.query("ROLLBACK").catch(() => {});
        throw err;
      }
    } finally {
      c.release();
    }
  };
}

/** The same through a Prisma interactive transaction, as the erasure writes its chunks. */
function prismaSide(first: number, second: number, meet: () => Promise<void>, tries: { n: number }) {
  return () =>
    db.prisma.$transaction(
      async (tx) => {
        tries.n++;
        await tx.$executeRaw`UPDATE retry_rows SET v = v + 1 WHERE id = ${first}`;
        if (tries.n === 1) await meet();
        await tx.$executeRaw`UPDATE retry_rows SET v = v + 1 WHERE id = ${second}`;
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
}

async function values(): Promise<number[]> {
  const { rows } = await db.pool.query<{ v: number }>("SELECT v FROM retry_rows ORDER BY id");
  return rows.map((r) => r.v);
}

describe.each([
  ["pg", pgSide],
  ["Prisma", prismaSide],
])("a deadlock through %s", (_driver, side) => {
  it("is recognised as retryable: one side fails with it, the other commits", async () => {
    await reset();
    const meet = barrier(2);
    const outcomes = await Promise.allSettled([side(1, 2, meet, { n: 0 })(), side(2, 1, meet, { n: 0 })()]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(failed).toHaveLength(1);
    expect(String((failed[0].reason as Error).message)).toMatch(/deadlock|write conflict/i);
    expect(isRetryableTransactionError(failed[0].reason)).toBe(true);
    // Only the survivor's two updates stand: the victim's first was rolled back with it.
    expect(await values()).toEqual([1, 1]);
  });

  it("retryTransaction runs the victim again, and both transactions' updates stand", async () => {
    await reset();
    const meet = barrier(2);
    const a = { n: 0 };
    const b = { n: 0 };
    await Promise.all([retryTransaction(side(1, 2, meet, a)), retryTransaction(side(2, 1, meet, b))]);
    expect(a.n + b.n).toBe(3);
    expect(await values()).toEqual([2, 2]);
  });
});

it("a deadlock between two Prisma model updates (Prisma's own code for it) is retryable too", async () => {
  await db.prisma.tenant.createMany({
    data: [
      { id: "retry_a", name: "A" },
      { id: "retry_b", name: "B" },
    ],
  });
  const meet = barrier(2);
  const side = (first: string, second: string) =>
    db.prisma.$transaction(async (tx) => {
      await tx.tenant.update({ where: { id: first }, data: { name: `${first} 1` } });
      await meet();
      await tx.tenant.update({ where: { id: second }, data: { name: `${second} 2` } });
    });
  const outcomes = await Promise.allSettled([side("retry_a", "retry_b"), side("retry_b", "retry_a")]);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
  expect(failed).toHaveLength(1);
  expect(failed[0].reason).toMatchObject({ code: "P2034" });
  expect(isRetryableTransactionError(failed[0].reason)).toBe(true);
});

describe("what is not retried", () => {
  it("a unique violation, a statement timeout and a non-error are not retryable, and retryTransaction throws the first at once", async () => {
    await reset();
    const unique = await db.pool.query("INSERT INTO retry_rows VALUES (1, 0)").catch((e: unknown) => e);
    expect((unique as { code?: string }).code).toBe("23505");
    expect(isRetryableTransactionError(unique)).toBe(false);
    const viaPrisma = await db.prisma.$executeRaw`INSERT INTO retry_rows VALUES (1, 0)`.catch((e: unknown) => e);
    expect(isRetryableTransactionError(viaPrisma)).toBe(false);
    const timeout = await db.prisma
      .$transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL statement_timeout = 50`;
        await tx.$queryRaw`SELECT pg_sleep(2)`;
      })
      .catch((e: unknown) => e);
    expect(isRetryableTransactionError(timeout)).toBe(false);
    expect(isRetryableTransactionError(undefined)).toBe(false);
    expect(isRetryableTransactionError("40P01")).toBe(false);

    let runs = 0;
    await expect(
      retryTransaction(async () => {
        runs++;
        await db.pool.query("INSERT INTO retry_rows VALUES (1, 0)");
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect(runs).toBe(1);
  });

  it("gives up after its tries, throwing the last deadlock", async () => {
    let runs = 0;
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    await expect(
      retryTransaction(async () => {
        runs++;
        throw deadlock;
      }, 3),
    ).rejects.toBe(deadlock);
    expect(runs).toBe(3);
  });
});
