// Migration 0019 (erasure) applied over a database that already holds events,
// deliveries (every state, resolved ones with their decisions) and attempts:
// every row is kept as it was, no event is a tombstone, and afterwards the new
// constraints accept an erasure's rows and refuse a half-written tombstone or
// an `erased` delivery without its decision.
import { describe, expect, it } from "vitest";
import { databaseBefore } from "../helpers/migration-db";

describe("migration 0019 on a database that already holds rows", () => {
  it("keeps every row and then holds tombstones and erased deliveries to their shape", async () => {
    const mdb = await databaseBefore("0019");
    const c = mdb.client;
    try {
      await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_m', 'm', 'https://m.example.test/h', '{assignment.graded}')`);
      await c.query(
        `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
         SELECT 'evt_m' || i, 'assignment.graded', convert_to('{"studentId":"stu_' || i || '"}', 'UTF8'), now(), 'lincoln',
                jsonb_build_object('studentId', 'stu_' || i), ARRAY['stu_' || i, 'studentId:stu_' || i]
           FROM generate_series(1, 600) i`,
      );
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at,
                                 resolution, resolved_at, resolved_by, resolution_reason, last_error_message)
         SELECT hl_delivery_key('sub_m', 'evt_m' || i), 'evt_m' || i, 'sub_m', 'assignment.graded',
                (ARRAY['pending', 'scheduled', 'delivered', 'dead_letter', 'resolved', 'delivered'])[i % 6 + 1],
                CASE WHEN i % 6 IN (3, 4) THEN 'permanent' END, CASE WHEN i % 6 IN (3, 4) THEN now() END,
                CASE WHEN i % 6 = 4 THEN 'discarded' END, CASE WHEN i % 6 = 4 THEN now() END,
                CASE WHEN i % 6 = 4 THEN 'user:a@example.test' END, CASE WHEN i % 6 = 4 THEN 'INC-1' END, 'echo ' || i
           FROM generate_series(1, 600) i`,
      );
      await c.query(
        `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome, response_excerpt)
         SELECT id, subscription_id, 1, 'scheduled', now(), 'retry', 'answer ' || id FROM deliveries`,
      );
      const snapshot = async () => ({
        events: (await c.query("SELECT id, type, payload, tenant, subject, subject_values, content_hash FROM events ORDER BY id")).rows,
        // Every column as it was; event_at is the one 0029 adds (checked below: the event's created_at).
        deliveries: (await c.query("SELECT * FROM deliveries ORDER BY id")).rows.map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => k !== "event_at"))),
        attempts: (await c.query("SELECT * FROM attempts ORDER BY id")).rows,
      });
      const before = await snapshot();
      expect(await mdb.applyRest()).toEqual(mdb.rest);
      expect(await snapshot()).toEqual(before);
      // 0029 gave each delivery its event's created_at (event_keys) as event_at.
      expect((await c.query("SELECT count(*)::int AS n FROM deliveries d JOIN event_keys k ON k.id = d.event_id AND k.created_at = d.event_at")).rows[0].n).toBe(
        before.deliveries.length,
      );
      expect((await c.query("SELECT count(*)::int AS n FROM events WHERE tombstone IS NOT NULL OR erasure_id IS NOT NULL")).rows[0].n).toBe(0);

      // An erasure's rows are accepted...
      await c.query("INSERT INTO erasures (id, subject_key, reason, actor) VALUES ('er_m', 'studentId', 'records request 1', 'cli:m')");
      await c.query("UPDATE events SET tombstone = 'erased', tombstoned_at = now(), erasure_id = 'er_m' WHERE id = 'evt_m1'");
      await c.query(
        "UPDATE deliveries SET state = 'resolved', resolution = 'erased', resolved_at = now(), resolved_by = 'cli:m', resolution_reason = 'erasure er_m' WHERE event_id = 'evt_m1'",
      );
      // ...a later expunge's too (no erasure id)...
      await c.query("UPDATE events SET tombstone = 'expunged', tombstoned_at = now() WHERE id = 'evt_m2'");
      // ...and half-written ones are refused.
      for (const bad of [
        "UPDATE events SET tombstone = 'erased', tombstoned_at = now() WHERE id = 'evt_m3'",
        "UPDATE events SET tombstone = 'erased', erasure_id = 'er_m' WHERE id = 'evt_m3'",
        "UPDATE events SET erasure_id = 'er_m' WHERE id = 'evt_m3'",
        "UPDATE events SET tombstone = 'forgotten', tombstoned_at = now() WHERE id = 'evt_m3'",
        "UPDATE events SET tombstone = 'expunged', tombstoned_at = now(), erasure_id = 'er_m' WHERE id = 'evt_m3'",
        "UPDATE deliveries SET state = 'resolved', resolution = 'erased' WHERE event_id = 'evt_m3'",
        "UPDATE deliveries SET state = 'resolved', resolution = 'forgotten', resolved_at = now(), resolved_by = 'x', resolution_reason = 'y' WHERE event_id = 'evt_m3'",
      ])
        await expect(c.query(bad), bad).rejects.toThrow(/violates check constraint/);
    } finally {
      await mdb.close();
    }
  }, 120_000);
});
