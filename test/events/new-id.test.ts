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

const drawn = async (n: number) => {
  const { rows } = await db.pool.query<{ id: string; at: Date }>("SELECT hl_new_id('dlv_') AS id, clock_timestamp() AS at FROM generate_series(1, $1)", [n]);
  return rows;
};

describe("hl_new_id", () => {
  it("keeps its form, and its first 14 hex digits are the clock's microseconds", async () => {
    const rows = await drawn(2_000);
    for (const { id, at } of rows) {
      expect(id).toMatch(/^dlv_[0-9a-f]{14}[0-9a-f]{12}$/);
      const micros = parseInt(id.slice(4, 18), 16);
      expect(Math.abs(micros / 1000 - at.getTime())).toBeLessThan(5);
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
