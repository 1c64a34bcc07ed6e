// The erasure's search for the operational events about a chunk of erased
// events (lib/ledger/sql/erase.ts, findOpsEventIds) reads the subject keys'
// GIN index, whatever the chunk's ids: planned with a bound array of 500
// keys, PostgreSQL estimated that `&&` matches a large share of the rows and
// scanned every month (7 s for one student's 1,000 events at 1 M deliveries,
// on a server whose collation is not C, so the type index cannot serve the
// statement's LIKE 'hookledger.%'). The test drops that index to be the same.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { findOpsEventIds } from "../../lib/ledger/sql/erase";
import { partitionName } from "../../lib/ledger/sql/partitions";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  // A district's worth of events, each searchable by its subject and a few operational ones.
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
     SELECT 'evt_p' || g, CASE WHEN g % 50 = 0 THEN 'hookledger.delivery.dead_lettered' ELSE 'assignment.graded' END, '\\x7b7d', now(), 'lincoln', '{}',
            ARRAY['stu_' || (g % 5000), 'studentId:stu_' || (g % 5000), 'eventId:evt_src' || (g % 20000), 'lincoln']
       FROM generate_series(1, 60000) g`,
  );
  await db.pool.query("DROP INDEX events_type_created");
  await db.pool.query("ANALYZE events");
});
afterAll(async () => db?.close());

it("finds a chunk's operational events through the subject keys' index, not by scanning the months", async () => {
  const ids = Array.from({ length: 500 }, (_, i) => `evt_src${i * 40}`);
  const client = await db.pool.connect();
  const plans: string[] = [];
  try {
    // Every statement's plan, as the erasure sends it (auto_explain is not loaded; the plan is asked for the same text).
    const query = client.query.bind(client);
    (client as unknown as { query: unknown }).query = async (text: string, values?: unknown[]) => {
      const { rows } = await query(`EXPLAIN ${text}`, values);
      plans.push(rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
      return query(text, values);
    };
    const found = await findOpsEventIds(client, ids);
    expect(found.length).toBeGreaterThan(0);
    for (const id of found) expect(id).toMatch(/^evt_p\d+$/);
  } finally {
    client.release();
  }
  expect(plans).toHaveLength(1);
  // The month that holds the rows is read through an index; only the empty months are scanned.
  const month = partitionName("events", new Date());
  expect(plans[0]).toMatch(new RegExp(`Index Scan on ${month}_subject_values_idx`));
  expect(plans[0]).not.toMatch(new RegExp(`Seq Scan on ${month} `));
});
