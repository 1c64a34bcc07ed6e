// Migration 0051 on a database that already holds redrive batches (running, done settled and not, cancelled) and their
// items: every batch and item is kept as it was, and the pacer's settle rounds then settle, through the new index, the
// cancelled batches none of whose moved deliveries is on its way, leave those with one still queued or retrying, and
// never look at a running one.
import { afterAll, expect, it } from "vitest";
import type pg from "pg";
import { asBefore, databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";
import { settleEveryFinishedBatch } from "../helpers/redrive-helpers";

let mdb: MigrationDb | undefined;

afterAll(async () => {
  await mdb?.close();
});

it("migration 0051_redrive_batch_settled_cancelled keeps every batch and item; cancelled batches are settled lazily, by the pacer", async () => {
  mdb = await databaseBefore("0051");
  const c = mdb.client;
  await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_m', 'M', 'https://m.example.test/in', '{assignment.graded}')`);
  // 300 batches: every third running, done or cancelled, finished an hour apart; the done ones before 150 settled
  // already (as the pacer did after 0050), with the settle_seq it left. Two items each, the cancelled ones' second
  // never reached (no outcome).
  await c.query(
    `INSERT INTO redrive_batches (id, reason, actor, rate_per_second, kind, status, matched, redriven, position, created_at, finished_at, cancelled_by,
                                  settled_at, settle_seq)
     SELECT 'rdb_m' || g, 'INC-' || g, 'token:engineer', 10, 'redrive', (ARRAY['running', 'done', 'cancelled'])[g % 3 + 1], 2,
            CASE WHEN g % 3 = 2 THEN 1 ELSE 2 END, CASE WHEN g % 3 = 2 THEN 1 ELSE 2 END,
            now() - make_interval(hours => 400 - g), CASE WHEN g % 3 = 0 THEN NULL ELSE now() - make_interval(hours => 300 - g) END,
            CASE WHEN g % 3 = 2 THEN 'token:engineer' END,
            CASE WHEN g % 3 = 1 AND g < 150 THEN now() - make_interval(hours => 290 - g) END, CASE WHEN g % 3 = 1 AND g >= 150 THEN 2 END
       FROM generate_series(1, 300) g`,
  );
  await c.query(
    `INSERT INTO redrive_batch_items (batch_id, seq, delivery_id, outcome, processed_at)
     SELECT 'rdb_m' || g, s, 'dlv_m' || g || '_' || s, CASE WHEN g % 3 = 2 AND s = 2 THEN NULL ELSE 'redriven' END,
            CASE WHEN g % 3 = 2 AND s = 2 THEN NULL ELSE now() END
       FROM generate_series(1, 300) g, generate_series(1, 2) s`,
  );
  // Their deliveries delivered, but for cancelled 2's moved one (pending) and cancelled 299's (retrying); the cancelled
  // batches' second items were never reached and stay dead-lettered.
  await c.query(
    `INSERT INTO deliveries (id, delivery_key, event_id, subscription_id, event_type, state, delivered_at, dead_lettered_at, dead_letter_reason, event_at)
     SELECT 'dlv_m' || g || '_' || s, 'k' || g || '_' || s, 'evt_m' || g || '_' || s, 'sub_m', 'assignment.graded', x.state,
            CASE WHEN x.state = 'delivered' THEN now() END, CASE WHEN x.state = 'dead_letter' THEN now() END,
            CASE WHEN x.state = 'dead_letter' THEN 'exhausted' END, now()
       FROM generate_series(1, 300) g, generate_series(1, 2) s
      CROSS JOIN LATERAL (SELECT CASE WHEN (g, s) = (2, 1) THEN 'pending' WHEN (g, s) = (299, 1) THEN 'scheduled'
                                      WHEN g % 3 = 2 AND s = 2 THEN 'dead_letter' ELSE 'delivered' END AS state) x`,
  );
  const batches = () => tableRows(c, "redrive_batches", ["id"]);
  const items = () => tableRows(c, "redrive_batch_items", ["batch_id", "seq"]);
  const before = { batches: await batches(), items: await items() };
  expect(before.batches).toHaveLength(300);
  expect(before.items).toHaveLength(600);

  expect(await mdb.applyRest()).toContain(mdb.rest[0]);
  expect(asBefore(before.batches, await batches())).toEqual(before.batches);
  expect(await items()).toEqual(before.items);

  // The pacer's round reads the done and cancelled batches not yet settled through the new index.
  await c.query("ANALYZE redrive_batches");
  const plan = (
    await c.query(`EXPLAIN SELECT b.id FROM redrive_batches b WHERE b.status IN ('done', 'cancelled') AND b.settled_at IS NULL ORDER BY b.finished_at, b.id LIMIT 5`)
  ).rows
    .map((r) => r["QUERY PLAN"])
    .join("\n");
  expect(plan, plan).toMatch(/Index (Only )?Scan using redrive_batches_unsettled/);

  // Rounds of 50 until every finished batch not yet settled has been looked at.
  const settledBefore = (await c.query(`SELECT id, settled_at::text FROM redrive_batches WHERE settled_at IS NOT NULL ORDER BY id`)).rows;
  await settleEveryFinishedBatch(c as unknown as pg.Pool, 50);
  const { rows } = await c.query(`SELECT id, status, settled_at IS NOT NULL AS settled FROM redrive_batches`);
  // Every cancelled batch settles but 2 (its moved delivery pending) and 299 (retrying); the done ones all settle.
  const unsettled = (status: string) => rows.filter((r) => r.status === status && !r.settled).map((r) => r.id);
  expect(unsettled("cancelled").sort()).toEqual(["rdb_m2", "rdb_m299"]);
  expect(unsettled("done")).toEqual([]);
  expect(rows.filter((r) => r.status === "running" && r.settled)).toEqual([]);
  // Those settled before keep when they were.
  const kept = (await c.query(`SELECT id, settled_at::text FROM redrive_batches WHERE id = ANY($1::text[]) ORDER BY id`, [settledBefore.map((r) => r.id)])).rows;
  expect(kept).toEqual(settledBefore);
});
