// Migration 0037 (the counters' queue and unfolded indexes, and a fold that
// removes the zeros among the groups it folded) applied over a database whose
// counters already hold folded and per-backend rows: every counter row is
// kept as it was, the indexes exist, and the new fold sums the same totals.
import { describe, expect, it } from "vitest";
import { databaseBefore } from "../helpers/migration-db";

describe("migration 0037 on a database that already holds counters", () => {
  it("keeps every counter row, adds the indexes, and folds to the same totals with no zero row left", async () => {
    const mdb = await databaseBefore("0037");
    const c = mdb.client;
    try {
      await c.query(
        `INSERT INTO subscriptions (id, name, url, event_types) SELECT 'sub_m' || i, 'm' || i, 'https://m.example.test/h', '{assignment.graded}' FROM generate_series(1, 3) i`,
      );
      await c.query(
        `INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_m' || i, 'assignment.graded', '\\x7b7d'::bytea, now() FROM generate_series(1, 300) i`,
      );
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at, delivered_at, event_at)
         SELECT md5(k.id), k.id, 'sub_m' || (1 + i % 3), 'assignment.graded', (ARRAY['pending', 'scheduled', 'delivered', 'dead_letter'])[1 + i % 4],
                CASE WHEN i % 4 = 3 THEN 'permanent' END, CASE WHEN i % 4 = 3 THEN now() END, CASE WHEN i % 4 = 2 THEN now() END, k.created_at
           FROM generate_series(1, 300) i JOIN event_keys k ON k.id = 'evt_m' || i`,
      );
      // Folded once the old way, then more changes from this backend: both kinds of row are there.
      await c.query("SELECT hl_fold_delivery_state_counts()");
      await c.query(
        "UPDATE deliveries SET state = 'pending', dead_letter_reason = NULL, dead_lettered_at = NULL WHERE subscription_id = 'sub_m1' AND state = 'dead_letter'",
      );
      await c.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE subscription_id = 'sub_m2' AND state = 'pending'");
      const rows = async () => (await c.query("SELECT subscription_id, state, reason, backend, n::int AS n FROM delivery_state_counts ORDER BY 1, 2, 3, 4")).rows;
      const totals = async () =>
        (await c.query("SELECT subscription_id, state, reason, sum(n)::int AS n FROM delivery_state_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3")).rows;
      const before = await rows();
      const sums = await totals();
      expect(before.some((r) => r.backend !== 0)).toBe(true);
      expect(before.some((r) => r.backend === 0)).toBe(true);

      expect(await mdb.applyRest()).toEqual(mdb.rest);
      expect(await rows()).toEqual(before);
      const { rows: idx } = await c.query("SELECT indexname FROM pg_indexes WHERE tablename = 'delivery_state_counts' ORDER BY 1");
      expect(idx.map((r) => r.indexname)).toEqual(expect.arrayContaining(["delivery_state_counts_queue", "delivery_state_counts_unfolded"]));

      // The fold: no per-backend row left, the same totals, and sub_m1's emptied dead-letter group gone rather than kept at zero.
      await c.query("SELECT hl_fold_delivery_state_counts()");
      const after = await rows();
      expect(after.filter((r) => r.backend !== 0)).toEqual([]);
      expect(after.filter((r) => r.n === 0)).toEqual([]);
      expect(after.find((r) => r.subscription_id === "sub_m1" && r.state === "dead_letter")).toBeUndefined();
      expect(await totals()).toEqual(sums);
    } finally {
      await mdb.close();
    }
  });
});
