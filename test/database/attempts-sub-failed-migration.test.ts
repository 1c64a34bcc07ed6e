// Migration 0053 on a ledger that already holds attempts, delivered and failed, in more than one month: every attempt
// is kept, and each month's partition has the failed attempts' index with its predicate, holding the failed ones only
// (test/dashboard/recent-answers.test.ts reads through it).
import { afterAll, expect, it } from "vitest";
import { databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;
afterAll(async () => {
  await mdb?.close();
});

it("migration 0053_attempts_sub_failed keeps every attempt and indexes the failed ones of every month", async () => {
  mdb = await databaseBefore("0053");
  const c = mdb.client;
  await c.query(`SELECT hl_ensure_partition(t, now() - interval '1 month') FROM unnest(ARRAY['events', 'deliveries', 'attempts']) t`);
  await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_m', 'm', 'https://m.example.test/h', '{assignment.graded}')`);
  await c.query(
    `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values, created_at)
     SELECT 'evt_m' || i, 'assignment.graded', convert_to('{}', 'UTF8'), now(), '{}', '{}', now() - make_interval(days => (i % 2) * 31)
       FROM generate_series(1, 300) i`,
  );
  await c.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, event_at, created_at)
     SELECT hl_delivery_key('sub_m', k.id), k.id, 'sub_m', 'assignment.graded', 'delivered', k.created_at, k.created_at FROM event_keys k`,
  );
  await c.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome, status_code, created_at)
     SELECT d.id, 'sub_m', n, 'scheduled', d.created_at + make_interval(secs => n), CASE WHEN n < 3 THEN 'retry' ELSE 'delivered' END,
            CASE WHEN n < 3 THEN 503 ELSE 204 END, d.created_at + make_interval(secs => n)
       FROM deliveries d, generate_series(1, 3) n`,
  );
  const before = await tableRows(c, "attempts", ["id"]);
  expect(before).toHaveLength(900);

  expect(mdb.rest[0]).toBe("0053_attempts_sub_failed");
  expect(await mdb.applyRest()).toEqual(mdb.rest);
  expect(await tableRows(c, "attempts", ["id"])).toEqual(before);

  const { rows } = await c.query<{ partition: string; def: string }>(
    `SELECT t.relname AS partition, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_inherits h JOIN pg_class t ON t.oid = h.inhrelid JOIN pg_index i ON i.indrelid = t.oid
      WHERE h.inhparent = 'attempts'::regclass AND pg_get_indexdef(i.indexrelid) LIKE '%WHERE%'`,
  );
  const withRows = (await c.query<{ p: string }>("SELECT DISTINCT tableoid::regclass::text AS p FROM attempts")).rows.map((r) => r.p);
  expect(withRows).toHaveLength(2);
  for (const p of withRows) {
    const def = rows.find((r) => r.partition === p)?.def;
    expect(def).toMatch(/\(subscription_id, started_at DESC\) WHERE \(outcome <> 'delivered'::text\)/);
  }
  // The failed attempts, and only they, are found through it.
  await c.query("SET enable_seqscan = off");
  await c.query("SET enable_bitmapscan = off");
  const { rows: plan } = await c.query(
    "EXPLAIN SELECT started_at FROM attempts WHERE subscription_id = 'sub_m' AND outcome <> 'delivered' ORDER BY started_at DESC LIMIT 1",
  );
  const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
  // The partial index answers the predicate: an index scan with no filter left on outcome.
  expect(text).toMatch(/Index (Only )?Scan using attempts_\w+ on attempts_p/);
  expect(text).not.toMatch(/Filter: .*outcome/);
  const failed = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = 'sub_m' AND outcome <> 'delivered'");
  expect(failed.rows[0].n).toBe(600);
});
