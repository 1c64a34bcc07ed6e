// Migration 0025 over a database that already holds deliveries: every row is
// kept, the delivery key is looked up through its new hash index, and a
// delivery's key stays unique because the (event, subscription) pair it is
// computed from does (a second delivery of the pair is refused).
import { expect, it } from "vitest";
import { databaseBefore } from "../helpers/migration-db";
import { deliveryKey } from "../../lib/ledger/delivery-key";

it("migration 0025 keeps every delivery; lookups by key use the hash index; the pair stays unique", async () => {
  const mdb = await databaseBefore("0025");
  const c = mdb.client;
  try {
    await c.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_k', 'k', 'https://k.example.test/h', '{assignment.graded}')");
    await c.query(
      `SELECT count(*) FROM hl_enqueue_events((SELECT array_agg('evt_k' || i) FROM generate_series(1, 500) i), array_fill('assignment.graded'::text, ARRAY[500]),
         array_fill('\\x7b7d'::bytea, ARRAY[500]), array_fill(now(), ARRAY[500]), array_fill(NULL::text, ARRAY[500]), array_fill('{}'::jsonb, ARRAY[500]),
         '{}', array_fill(1, ARRAY[500]), array_fill(0, ARRAY[500]))`,
    );
    const before = (await c.query("SELECT id, delivery_key FROM deliveries ORDER BY id")).rows;
    expect(before).toHaveLength(500);

    expect(await mdb.applyRest()).toEqual(mdb.rest);
    expect((await c.query("SELECT id, delivery_key FROM deliveries ORDER BY id")).rows).toEqual(before);
    const { rows: idx } = await c.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'deliveries' AND indexdef ILIKE '%(delivery_key)%'");
    expect(idx.map((r) => r.indexdef)).toEqual([expect.stringMatching(/USING hash \(delivery_key\)/)]);

    // A support person's lookup by a receiver's webhook-id reads the index (scans are ruled out to ask whether it can).
    const key = deliveryKey("sub_k", "evt_k42");
    await c.query("SET enable_seqscan = off");
    const plan = (await c.query("EXPLAIN SELECT id FROM deliveries WHERE delivery_key = $1", [key])).rows.map((r) => r["QUERY PLAN"]).join("\n");
    await c.query("RESET enable_seqscan");
    // deliveries is partitioned by month (0029): the hash index is made on every month, and each month's is read.
    expect(plan).toMatch(/deliveries_p\d{4}_\d{2}_delivery_key_idx/);
    expect(plan).not.toMatch(/Seq Scan/);
    expect((await c.query("SELECT event_id FROM deliveries WHERE delivery_key = $1", [key])).rows).toEqual([{ event_id: "evt_k42" }]);

    // The key is a function of the pair, and the pair is unique: a second delivery of it is refused. Since 0029 the unique
    // key is (event_id, subscription_id, event_at) and Postgres names the month's copy of it in the error.
    await expect(
      c.query(
        "INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at) VALUES ($1, 'evt_k42', 'sub_k', 'assignment.graded', (SELECT created_at FROM event_keys WHERE id = 'evt_k42'))",
        [key],
      ),
    ).rejects.toThrow(/unique constraint "deliveries_p\d{4}_\d{2}_event_id_subscription_id_event_at_key"/);
  } finally {
    await mdb.close();
  }
});
