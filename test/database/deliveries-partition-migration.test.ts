// Migration 0029 (deliveries partitioned by their event's month) applied over
// a database that already holds deliveries of several months, in every
// state, with attempts, batch items and counters: every delivery is kept with
// the same values, gains its event's created_at as event_at, and sits in that
// month's partition; the keys, the triggers and the enqueue work on the new
// table.
import { describe, expect, it } from "vitest";
import { databaseBefore } from "../helpers/migration-db";

describe("migration 0029 on a database that already holds deliveries", () => {
  it("keeps every delivery, files it in its event's month, and keeps the keys and triggers working", async () => {
    const mdb = await databaseBefore("0029");
    const c = mdb.client;
    try {
      await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_a', 'a', 'https://a.example.test/h', '{assignment.graded}'),
                                                                                  ('sub_b', 'b', 'https://b.example.test/h', '{assignment.graded}')`);
      // 300 events over five months (35 days apart); two deliveries each, in every state.
      await c.query(
        `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
         SELECT 'evt_m' || i, 'assignment.graded', convert_to('{"i":' || i || '}', 'UTF8'), now(), 'lincoln', '{}', '{}',
                now() - (i % 5) * interval '35 days' - i * interval '1 second'
           FROM generate_series(1, 300) i`,
      );
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, created_at, delivered_at, dead_letter_reason, dead_lettered_at,
                                 resolution, resolved_at, resolved_by, resolution_reason)
         SELECT hl_delivery_key(s, e.id), e.id, s, e.type, st, e.created_at + interval '1 day',
                CASE WHEN st = 'delivered' THEN e.created_at + interval '1 day' END,
                CASE WHEN st = 'dead_letter' THEN 'exhausted' END, CASE WHEN st = 'dead_letter' THEN e.created_at END,
                CASE WHEN st = 'resolved' THEN 'discarded' END, CASE WHEN st = 'resolved' THEN now() END,
                CASE WHEN st = 'resolved' THEN 'cli:t' END, CASE WHEN st = 'resolved' THEN 'r' END
           FROM events e, unnest(ARRAY['sub_a', 'sub_b']) s,
                LATERAL (SELECT (ARRAY['pending', 'scheduled', 'delivered', 'dead_letter', 'resolved'])[1 + (substr(e.id, 6)::int + length(s)) % 5] AS st) x`,
      );
      await c.query(
        `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome, created_at)
         SELECT d.id, d.subscription_id, 1, 'scheduled', d.created_at, 'retry', d.created_at FROM deliveries d`,
      );
      await c.query(`INSERT INTO redrive_batches (id, filter, reason, actor, rate_per_second) VALUES ('rdb_m', '{}', 'r', 'cli:m', 10)`);
      await c.query(
        `INSERT INTO redrive_batch_items (batch_id, seq, delivery_id, event_id)
         SELECT 'rdb_m', row_number() OVER (ORDER BY id), id, event_id FROM deliveries WHERE state = 'dead_letter'`,
      );
      const counts = async () => (await c.query("SELECT subscription_id, state, sum(n)::int AS n FROM delivery_state_counts GROUP BY 1, 2 ORDER BY 1, 2")).rows;
      const countsBefore = await counts();
      const before = (await c.query("SELECT * FROM deliveries ORDER BY id")).rows;
      expect(before).toHaveLength(600);

      expect(await mdb.applyRest()).toEqual(mdb.rest);

      // Every delivery kept with the same values, plus event_at: its event's created_at.
      const after = (await c.query("SELECT d.*, k.created_at AS key_at FROM deliveries d JOIN event_keys k ON k.id = d.event_id ORDER BY d.id")).rows;
      expect(after.map(({ event_at: _a, key_at: _k, ...rest }) => rest)).toEqual(before);
      for (const r of after) expect(r.event_at).toEqual(r.key_at);
      // Partitioned on event_at; each row in its event's month, none in the default partition.
      expect((await c.query("SELECT relkind FROM pg_class WHERE relname = 'deliveries'")).rows[0].relkind).toBe("p");
      const misfiled = await c.query(
        "SELECT count(*)::int AS n FROM deliveries WHERE tableoid::regclass::text <> 'deliveries_p' || to_char(event_at AT TIME ZONE 'UTC', 'YYYY_MM')",
      );
      expect(misfiled.rows[0].n).toBe(0);
      expect((await c.query("SELECT count(DISTINCT tableoid)::int AS n FROM deliveries")).rows[0].n).toBe(5);
      // The keys: (id, event_at) and (event_id, subscription_id, event_at); the batch items no longer reference deliveries.
      const keys = (
        await c.query(
          `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'deliveries'::regclass AND contype IN ('p', 'u', 'f') ORDER BY 1`,
        )
      ).rows;
      expect(keys).toEqual([
        { conname: "deliveries_event_id_subscription_id_key", def: "UNIQUE (event_id, subscription_id, event_at)" },
        { conname: "deliveries_pkey", def: "PRIMARY KEY (id, event_at)" },
      ]);
      expect((await c.query("SELECT count(*)::int AS n FROM pg_constraint WHERE confrelid = 'deliveries'::regclass")).rows[0].n).toBe(0);
      const oneEvent = before[0];
      await expect(
        c.query(
          "INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at) SELECT 'k', $1, $2, 't', created_at FROM event_keys WHERE id = $1",
          [oneEvent.event_id, oneEvent.subscription_id],
        ),
      ).rejects.toThrow(/deliveries_p\d{4}_\d{2}_event_id_subscription_id_event_at_key/);
      // The counters were not touched by the copy, and the count trigger runs on the new table.
      expect(await counts()).toEqual(countsBefore);
      await c.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE state = 'pending' AND subscription_id = 'sub_a'");
      const moved = (await counts()).filter((r) => r.subscription_id === "sub_a");
      expect(moved.find((r) => r.state === "pending")?.n ?? 0).toBe(0);
      expect(moved.find((r) => r.state === "delivered")?.n).toBe(
        countsBefore.filter((r) => r.subscription_id === "sub_a" && ["pending", "delivered"].includes(r.state)).reduce((a, r) => a + r.n, 0),
      );
      // The enqueue writes event_at from the key it inserts.
      await c.query(
        `SELECT * FROM hl_enqueue_events(ARRAY['evt_new'], ARRAY['assignment.graded'], ARRAY['\\x7b7d'::bytea], ARRAY[now()], ARRAY['lincoln'], ARRAY['{}'::jsonb],
                                         '{}'::text[], ARRAY[1], ARRAY[0])`,
      );
      const fresh = (
        await c.query(
          "SELECT d.event_at = k.created_at AS same, d.tableoid::regclass::text AS part FROM deliveries d JOIN event_keys k ON k.id = d.event_id WHERE d.event_id = 'evt_new'",
        )
      ).rows;
      expect(fresh).toHaveLength(2);
      for (const r of fresh) expect(r).toEqual({ same: true, part: `deliveries_p${new Date().toISOString().slice(0, 7).replace("-", "_")}` });
    } finally {
      await mdb.close();
    }
  });
});
