// Migration 0021 (month partitions of events and attempts) applied over a
// database that already holds rows of several months: every row is kept with
// the same values and keys, each lands in its month's partition, the event
// ids stay unique (event_keys), attempt ids continue after the highest one,
// and the deliveries' and batch items' references to events still hold.
import { describe, expect, it } from "vitest";
import { databaseBefore } from "../helpers/migration-db";

describe("migration 0021 on a database that already holds rows", () => {
  it("keeps every row, key and reference, and files each row in its month", async () => {
    const mdb = await databaseBefore("0021");
    const c = mdb.client;
    try {
      await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_p', 'p', 'https://p.example.test/h', '{assignment.graded}')`);
      // 900 events over five months (35 days apart), one tombstone, one with a content hash.
      await c.query(
        `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at, content_hash)
         SELECT 'evt_p' || i, 'assignment.graded', convert_to('{"studentId":"stu_' || i || '"}', 'UTF8'), now() - i * interval '1 minute', 'lincoln',
                jsonb_build_object('studentId', 'stu_' || i), ARRAY['stu_' || i, 'studentId:stu_' || i],
                now() - (i % 5) * interval '35 days' - i * interval '1 second', CASE WHEN i = 7 THEN sha256('x') END
           FROM generate_series(1, 900) i`,
      );
      await c.query("INSERT INTO erasures (id, subject_key, reason, actor) VALUES ('er_p', 'studentId', 'request 1', 'cli:p')");
      await c.query(
        "UPDATE events SET payload = '\\x', subject = '{}', subject_values = '{}', tombstone = 'erased', tombstoned_at = now(), erasure_id = 'er_p' WHERE id = 'evt_p3'",
      );
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, created_at)
         SELECT hl_delivery_key('sub_p', id), id, 'sub_p', type, (ARRAY['pending', 'delivered', 'scheduled'])[(substr(id, 6)::int % 3) + 1], created_at FROM events`,
      );
      await c.query(
        `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome, response_excerpt, created_at)
         SELECT d.id, d.subscription_id, n, 'scheduled', d.created_at + n * interval '1 minute', 'retry', 'answer ' || n, d.created_at + n * interval '1 minute'
           FROM deliveries d, generate_series(1, 2) n`,
      );
      await c.query(`INSERT INTO redrive_batches (id, filter, reason, actor, rate_per_second, kind) VALUES ('rdb_p', '{}', 'r', 'cli:p', 10, 'backfill')`);
      await c.query(`INSERT INTO redrive_batch_items (batch_id, seq, event_id) VALUES ('rdb_p', 1, 'evt_p5')`);

      const snapshot = async () => ({
        events: (await c.query("SELECT * FROM events ORDER BY id")).rows,
        // Every column as it was; event_at is the one 0029 adds (checked below: the event's created_at).
        deliveries: (await c.query("SELECT * FROM deliveries ORDER BY id")).rows.map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => k !== "event_at"))),
        attempts: (await c.query("SELECT * FROM attempts ORDER BY id")).rows,
        items: (await c.query("SELECT * FROM redrive_batch_items ORDER BY batch_id, seq")).rows,
      });
      const before = await snapshot();
      const maxAttempt = Number((await c.query("SELECT max(id) AS m FROM attempts")).rows[0].m);
      expect(await mdb.applyRest()).toEqual(mdb.rest);
      expect(await snapshot()).toEqual(before);
      // 0029 gave each delivery its event's created_at (event_keys) as event_at.
      expect((await c.query("SELECT count(*)::int AS n FROM deliveries d JOIN event_keys k ON k.id = d.event_id AND k.created_at = d.event_at")).rows[0].n).toBe(
        before.deliveries.length,
      );

      // Both tables are partitioned; every row sits in the partition of its month (none in the default). deliveries
      // is partitioned too since 0029 (by its event's month, event_at).
      const kinds = (await c.query("SELECT relname, relkind FROM pg_class WHERE relname IN ('events', 'attempts', 'deliveries') ORDER BY 1")).rows;
      expect(kinds).toEqual([
        { relname: "attempts", relkind: "p" },
        { relname: "deliveries", relkind: "p" },
        { relname: "events", relkind: "p" },
      ]);
      for (const t of ["events", "attempts"]) {
        const misfiled = await c.query(
          `SELECT count(*)::int AS n FROM ${t} WHERE tableoid::regclass::text <> '${t}_p' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY_MM')`,
        );
        expect(misfiled.rows[0].n).toBe(0);
        const months = await c.query(`SELECT count(DISTINCT tableoid)::int AS n FROM ${t}`);
        expect(months.rows[0].n).toBeGreaterThanOrEqual(5);
      }
      // event_keys holds every id with its time; the ids stay unique.
      expect((await c.query("SELECT count(*)::int AS n FROM event_keys k JOIN events e ON e.id = k.id AND e.created_at = k.created_at")).rows[0].n).toBe(900);
      await expect(c.query(`INSERT INTO events (id, type, payload, occurred_at) VALUES ('evt_p1', 'assignment.graded', '\\x7b7d', now())`)).rejects.toThrow(
        /event_keys_pkey/,
      );
      // Attempt ids continue after the highest copied one.
      const { rows: d } = await c.query("SELECT id FROM deliveries LIMIT 1");
      const next = await c.query(
        `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome) VALUES ($1, 'sub_p', 3, 'scheduled', now(), 'retry') RETURNING id`,
        [d[0].id],
      );
      expect(Number(next.rows[0].id)).toBe(maxAttempt + 1);
      // References: none to event_keys any more. An attempt's delivery is held by the ledger's own statements
      // since 0023, a delivery's event since 0028 (test/retention/retention-partitions.test.ts, test/operator/backfill.test.ts),
      // a batch item's event since 0031 (an advisory lock: test/retention/retention-partitions.test.ts).
      const { rows: refs } = await c.query(
        "SELECT conrelid::regclass::text AS t, conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'event_keys'::regclass ORDER BY 1",
      );
      expect(refs).toEqual([]);
      // The enqueue still treats a stored id as a republish, and writes a new one once.
      const enq = await c.query(
        `SELECT event_id, delivery_id FROM hl_enqueue_events(ARRAY['evt_p2', 'evt_pnew'], ARRAY['assignment.graded', 'assignment.graded'],
           ARRAY['\\x7b7d'::bytea, '\\x7b7d'::bytea], ARRAY[now(), now()], ARRAY[NULL, NULL]::text[], ARRAY['{}'::jsonb, '{}'::jsonb], '{}', ARRAY[1, 1], ARRAY[0, 0])`,
      );
      expect(enq.rows.map((r) => r.event_id)).toEqual(["evt_pnew"]);
      expect(enq.rows[0].delivery_id).toMatch(/^dlv_/);
    } finally {
      await mdb.close();
    }
  });
});
