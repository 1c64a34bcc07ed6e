// hl_new_id (migrations 0001, 0032): "<prefix><14 hex of epoch µs><12 random hex>".
// Cursors and time windows read an id as its time (lib/dashboard/subscriptions.ts
// idBound, lib/ledger/sql/find-deliveries.ts), so the time part must be the
// clock's, and the random part must keep ids apart across backends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

// Each id between two readings of the clock in the same row, in microseconds (the select list is evaluated left to
// right): exact however long the backend is kept from running between the readings, as on a busy machine.
const drawn = async (n: number) => {
  const { rows } = await db.pool.query<{ before: string; id: string; after: string }>(
    `SELECT (extract(epoch FROM clock_timestamp()) * 1e6)::bigint AS before, hl_new_id('dlv_') AS id,
            (extract(epoch FROM clock_timestamp()) * 1e6)::bigint AS after
       FROM generate_series(1, $1)`,
    [n],
  );
  return rows;
};

describe("hl_new_id", () => {
  it("keeps its form, and its first 14 hex digits are the clock's microseconds", async () => {
    const rows = await drawn(2_000);
    for (const { before, id, after } of rows) {
      expect(id).toMatch(/^dlv_[0-9a-f]{14}[0-9a-f]{12}$/);
      const micros = BigInt(parseInt(id.slice(4, 18), 16));
      expect(micros >= BigInt(before) && micros <= BigInt(after), `${id}: ${micros} µs, the clock read ${before} and ${after}`).toBe(true);
    }
    // Sorted by id is sorted by time: each id's time part is at or after the one drawn before it. Two ids
    // drawn in the same microsecond share it and then sort by their random parts, in no particular order.
    const times = rows.map((r) => r.id.slice(4, 18));
    expect(times.every((t, i) => i === 0 || t >= times[i - 1])).toBe(true);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  });

  it("draws different random parts in different backends", async () => {
    const [a, b] = await Promise.all([drawn(20_000), drawn(20_000)]);
    const tails = new Set([...a, ...b].map((r) => r.id.slice(18)));
    expect(tails.size).toBe(40_000);
    // Not a constant or a counter: the tails spread over the whole 48-bit range.
    const high = [...tails].filter((t) => t[0] >= "8").length;
    expect(high / tails.size).toBeGreaterThan(0.45);
    expect(high / tails.size).toBeLessThan(0.55);
  });
});
