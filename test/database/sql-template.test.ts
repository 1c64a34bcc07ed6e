// The ledger's statement builder (lib/ledger/read/db.ts): values always travel
// as parameters, nested fragments are renumbered, and a built statement runs
// the same on pg and inside a Prisma transaction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { empty, join, queryRows, raw, sql } from "../../lib/ledger/read/db";
import { createTestDatabase, type TestDb } from "../helpers/db";

describe("sql", () => {
  it("numbers values in order through nested fragments, joins and raw text", () => {
    const inner = sql`b = ${2} AND c = ${"three"}`;
    const list = join([sql`x = ${4}`, sql`y = ${5}`, empty], " OR ");
    const q = sql`SELECT ${raw("d.id")} FROM t WHERE a = ${1} AND ${inner} AND (${list}) LIMIT ${6}::int`;
    expect(q.text).toBe("SELECT d.id FROM t WHERE a = $1 AND b = $2 AND c = $3 AND (x = $4 OR y = $5 OR ) LIMIT $6::int");
    expect(q.values).toEqual([1, 2, "three", 4, 5, 6]);
  });

  it("keeps a hostile value out of the text, and an array as one parameter", () => {
    const q = sql`SELECT 1 WHERE x = ${"'; DROP TABLE deliveries; --"} AND id = ANY(${["a", "b"]}::text[])`;
    expect(q.text).toBe("SELECT 1 WHERE x = $1 AND id = ANY($2::text[])");
    expect(q.values).toEqual(["'; DROP TABLE deliveries; --", ["a", "b"]]);
  });

  it("an empty join and empty are no text and no values", () => {
    expect(join([], " AND ").text).toBe("");
    expect(sql`a${empty}b`.text).toBe("ab");
    expect(sql`${raw("x")}`.values).toEqual([]);
  });
});

describe("queryRows", () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.close());

  it("answers the same on the pg pool, a pg client and a Prisma transaction", async () => {
    const q = sql`SELECT ${"it's"}::text AS s, ${[1, 2]}::int[] AS a, ${sql`${3}::int + ${4}::int`} AS n`;
    const want = [{ s: "it's", a: [1, 2], n: 7 }];
    expect(await queryRows(db.pool, q)).toEqual(want);
    const c = await db.pool.connect();
    try {
      expect(await queryRows(c, q)).toEqual(want);
    } finally {
      c.release();
    }
    expect(await db.prisma.$transaction((tx) => queryRows(tx, q))).toEqual(want);
  });
});
