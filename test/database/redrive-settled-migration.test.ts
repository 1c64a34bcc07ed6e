// Migration 0050 on a database that already holds redrive batches (running, done, cancelled) and their items: every
// batch and item is kept as it was, no existing batch is settled by the migration, and the pacer's settle rounds then
// settle the done batches none of whose deliveries is on its way, through the new index, and leave the others.
import { afterAll, expect, it } from "vitest";
import type pg from "pg";
import { asBefore, databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";
import { settleEveryFinishedBatch } from "../helpers/redrive-helpers";

let mdb: MigrationDb | undefined;

afterAll(async () => {
  await mdb?.close();
});

it("migration 0050_redrive_batch_settled keeps every batch and item; done batches are settled lazily, by the pacer", async () => {
  mdb = await databaseBefore("0050");
  const c = mdb.client;
  await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_m', 'M', 'https://m.example.test/in', '{assignment.graded}')`);
  // 300 batches: every third running, done or cancelled, done ones finished an hour apart; two items each.
  await c.query(
    `INSERT INTO redrive_batches (id, reason, actor, rate_per_second, kind, status, matched, redriven, position, created_at, finished_at)
     SELECT 'rdb_m' || g, 'INC-' || g, 'token:engineer', 10, 'redrive', (ARRAY['running', 'done', 'cancelled'])[g % 3 + 1], 2, 2, 2,
            now() - make_interval(hours => 400 - g), CASE WHEN g % 3 = 0 THEN NULL ELSE now() - make_interval(hours => 300 - g) END
       FROM generate_series(1, 300) g`,
  );
  await c.query(
    `INSERT INTO redrive_batch_items (batch_id, seq, delivery_id, outcome, processed_at)
     SELECT 'rdb_m' || g, s, 'dlv_m' || g || '_' || s, 'redriven', now() FROM generate_series(1, 300) g, generate_series(1, 2) s`,
  );
  // Their deliveries delivered, but for batch 298's second (done, still retrying) and 1's (done, pending).
  await c.query(
    `INSERT INTO deliveries (id, delivery_key, event_id, subscription_id, event_type, state, delivered_at, event_at)
     SELECT 'dlv_m' || g || '_' || s, 'k' || g || '_' || s, 'evt_m' || g || '_' || s, 'sub_m', 'assignment.graded',
            CASE WHEN (g, s) IN ((298, 2), (1, 1)) THEN (CASE WHEN g = 1 THEN 'pending' ELSE 'scheduled' END) ELSE 'delivered' END,
            CASE WHEN (g, s) IN ((298, 2), (1, 1)) THEN NULL ELSE now() END, now()
       FROM generate_series(1, 300) g, generate_series(1, 2) s`,
  );
  const batches = () => tableRows(c, "redrive_batches", ["id"]);
  const items = () => tableRows(c, "redrive_batch_items", ["batch_id", "seq"]);
  const before = { batches: await batches(), items: await items() };
  expect(before.batches).toHaveLength(300);
  expect(before.items).toHaveLength(600);

  expect(await mdb.applyRest()).toContain(mdb.rest[0]);
  expect(asBefore(before.batches, await batches())).toEqual(before.batches);
  expect(await items()).toEqual(before.items);

  // The pacer's round reads the done batches not yet settled through the new index.
  await c.query("ANALYZE redrive_batches");
  const plan = (await c.query(`EXPLAIN SELECT b.id FROM redrive_batches b WHERE b.status = 'done' AND b.settled_at IS NULL ORDER BY b.finished_at, b.id LIMIT 5`)).rows
    .map((r) => r["QUERY PLAN"])
    .join("\n");
  expect(plan, plan).toMatch(/Index (Only )?Scan using redrive_batches_unsettled/);

  // Rounds of 50 until every done batch has been looked at: all settle but 1 (pending) and 298 (retrying).
  await settleEveryFinishedBatch(c as unknown as pg.Pool, 50);
  const { rows } = await c.query(`SELECT id, status, settled_at IS NOT NULL AS settled FROM redrive_batches`);
  const unsettledDone = rows.filter((r) => r.status === "done" && !r.settled).map((r) => r.id);
  expect(unsettledDone.sort()).toEqual(["rdb_m1", "rdb_m298"]);
  // A later migration (0051) has the rounds settle cancelled batches too (here none has a delivery on its way); never a running one.
  expect(rows.filter((r) => r.status === "running" && r.settled)).toEqual([]);
  expect(rows.filter((r) => r.status === "cancelled" && !r.settled)).toEqual([]);
  expect(rows.filter((r) => r.status === "done" && r.settled)).toHaveLength(98);
});
