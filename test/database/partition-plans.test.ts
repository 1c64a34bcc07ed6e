// events and attempts are partitioned by month (migration 0021): the hot
// path's statements keep their plans and touch one month, a row for a month
// without a partition is kept (default partition) and moved when the month's
// partition is made, the maintenance is idempotent beside itself, and a drop
// takes one whole past month and refuses everything else.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, delivered, seedEvents } from "../helpers/worker-helpers";
import { claimCtes, claimParams, type ClaimedRow } from "../../lib/ledger/sql/claim";
import { resultsJson, writeCtes } from "../../lib/ledger/sql/write-results";
import { findAttempts } from "../../lib/ledger/sql/find-deliveries";
import { ensurePartitions, listPartitions, monthStart, partitionName, PartitionDropRefused, swapPartition } from "../../lib/ledger/sql/partitions";
import { sql } from "../../lib/ledger/read/db";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await createSub(db.pool, { id: "sub_part", url: "http://127.0.0.1:9/hooks" });
  // Events of three past months, so the claim has partitions to skip.
  for (const back of [3, 2, 1]) await ensurePartitions(db.pool, { from: monthStart(new Date(), -back) });
  await seedEvents(db.pool, "evt_part_", 6, ["sub_part"]);
  await db.pool.query(`UPDATE event_keys SET created_at = created_at - make_interval(months => 2) WHERE id IN ('evt_part_1', 'evt_part_2')`);
  await db.pool.query(`UPDATE events SET created_at = created_at - make_interval(months => 2) WHERE id IN ('evt_part_1', 'evt_part_2')`);
  // A delivery lives in its event's month (event_at, migration 0029): the two events' deliveries move with them.
  await db.pool.query(`UPDATE deliveries d SET event_at = k.created_at FROM event_keys k WHERE k.id = d.event_id AND d.event_id IN ('evt_part_1', 'evt_part_2')`);
  await db.pool.query("ANALYZE");
});
afterAll(async () => db?.close());

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Actual Loops"?: number; Plans?: PlanNode[] };

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function explain(sql: string, values: unknown[]): Promise<PlanNode[]> {
  const c = await db.pool.connect();
  try {
    await c.query("BEGIN");
    const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
    return nodes(rows[0]["QUERY PLAN"][0].Plan);
  } finally {
    await c.query("ROLLBACK");
    c.release();
  }
}

const executedOn = (plan: PlanNode[], prefix: string) =>
  plan.filter((n) => n["Relation Name"]?.startsWith(prefix) && (n["Actual Loops"] ?? 0) > 0).map((n) => n["Relation Name"]!);

const claimSql = `WITH ${claimCtes({ owner: "$1", limit: "$2", perSub: "$3", exclude: "$4", slack: "$5", answered: "$6", held: "$7", after: "$8" })} SELECT * FROM claimed`;
const claimValues = () => ["w_part", ...claimParams({ owner: "w_part", limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [] })];

describe("hot-path plans on the partitioned tables", () => {
  it("the claim finds each claimed delivery and its payload in their own month only (run-time pruning)", async () => {
    const plan = await explain(claimSql, claimValues());
    // Every month partition is in the plan, but only the two months holding the claimed rows' events are read.
    expect(plan.filter((n) => n["Relation Name"]?.startsWith("events_")).length).toBeGreaterThanOrEqual(6);
    const touched = executedOn(plan, "events_");
    const months = new Set([partitionName("events", new Date()), partitionName("events", monthStart(new Date(), -2))]);
    expect(new Set(touched)).toEqual(months);
    // The update finds each claimed row by (id, event_at) in its own month: the scans of the other
    // months' partitions are never run. (The due scan before it reads every month's small due index.)
    const update = plan.find((n) => n["Node Type"] === "ModifyTable" && n["Relation Name"] === "deliveries");
    const found = nodes(update!).filter((n) => n !== update && n["Relation Name"]?.startsWith("deliveries_"));
    expect(found.length).toBeGreaterThanOrEqual(7);
    expect(new Set(found.filter((n) => (n["Actual Loops"] ?? 0) > 0).map((n) => n["Relation Name"]))).toEqual(
      new Set([partitionName("deliveries", new Date()), partitionName("deliveries", monthStart(new Date(), -2))]),
    );
    // The delivery's event_at names the month: no lookup of event_keys; nothing of attempts is read.
    expect(plan.some((n) => n["Relation Name"] === "event_keys")).toBe(false);
    expect(executedOn(plan, "attempts")).toEqual([]);
  });

  it("the result write reads no month partition and its attempt rows land in the current month", async () => {
    const { rows } = await db.pool.query<ClaimedRow>(claimSql, claimValues());
    expect(rows.length).toBe(6);
    const results = rows.map(delivered);
    const plan = await explain(`WITH ${writeCtes(false)} SELECT ord FROM upd`, ["w_part", resultsJson(results)]);
    // Nothing of attempts or events is read: the write reads deliveries and inserts into one attempts month.
    expect(plan.filter((n) => /^(attempts|events)_/.test(n["Relation Name"] ?? "") && n["Node Type"] !== "ModifyTable")).toEqual([]);
    await db.pool.query(`WITH ${writeCtes(false)} SELECT ord FROM upd`, ["w_part", resultsJson(results)]);
    const { rows: where } = await db.pool.query("SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM attempts GROUP BY 1");
    expect(where).toEqual([{ p: partitionName("attempts", new Date()), n: 6 }]);
  });

  it("the attempts of a page of deliveries are read from the months since the oldest delivery only", async () => {
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM deliveries WHERE subscription_id = 'sub_part' ORDER BY id LIMIT 6");
    const ids = rows.map((r) => r.id);
    // The statement findAttempts runs, captured as it is sent, then explained with its own parameters.
    const sent: { text: string; values: unknown[] }[] = [];
    const spy = {
      query: (text: string, values: unknown[]) => {
        sent.push({ text, values });
        return db.pool.query(text, values);
      },
    } as unknown as pg.Pool;
    const found = await findAttempts(spy, ids);
    expect([...found.values()].flat().length).toBe(6);
    expect(sent).toHaveLength(1);
    const plan = await explain(sent[0].text, sent[0].values);
    const read = executedOn(plan, "attempts_");
    expect(read).toContain(partitionName("attempts", new Date()));
    for (const back of [1, 2, 3]) expect(read).not.toContain(partitionName("attempts", monthStart(new Date(), -back)));
  });

  it("the enqueue checks a republished id in event_keys, not in the event months, and writes the current month", async () => {
    const { rows } = await db.pool.query<{ src: string }>("SELECT prosrc AS src FROM pg_proc WHERE proname = 'hl_enqueue_events'");
    let body = rows[0].src;
    const params = [
      "p_ids",
      "p_types",
      "p_payloads",
      "p_occurred_at",
      "p_tenants",
      "p_subjects",
      "p_subject_values",
      "p_sv_from",
      "p_sv_to",
      "p_subscriptions",
      "p_hashes",
      "p_wake",
      "p_payload_blob",
      "p_payload_ends",
      "p_hash_blob",
    ];
    const types = [
      "text[]",
      "text[]",
      "bytea[]",
      "timestamptz[]",
      "text[]",
      "jsonb[]",
      "text[]",
      "int[]",
      "int[]",
      "text[]",
      "bytea[]",
      "boolean",
      "bytea",
      "int[]",
      "bytea",
    ];
    params.forEach((p, i) => (body = body.replace(new RegExp(`\\b${p}\\b`, "g"), `($${i + 1}::${types[i]})`)));
    const values = [
      ["evt_part_1", "evt_part_new"],
      ["assignment.graded", "assignment.graded"],
      null, // the payloads packed, as the ingest sends them (lib/ledger/sql/enqueue.ts)
      [new Date(), new Date()],
      [null, null],
      ["{}", "{}"],
      [],
      [1, 1],
      [0, 0],
      ["sub_part"],
      [null, null],
      true,
      Buffer.from("{}{}"),
      [2, 4],
      null,
    ];
    const plan = await explain(body, values);
    expect(plan.some((n) => n["Node Type"] === "ModifyTable" && n["Relation Name"] === "event_keys")).toBe(true);
    // No scan of events at all: the id's uniqueness is event_keys' primary key (ON CONFLICT).
    expect(plan.filter((n) => (n["Relation Name"] ?? "").startsWith("events") && n["Node Type"] !== "ModifyTable")).toEqual([]);
    const out = await db.pool.query(body, values);
    expect(out.rowCount).toBe(1); // evt_part_new and its one delivery; evt_part_1 is a republish: skipped
    expect((await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id = 'evt_part_1'")).rows[0].n).toBe(1);
    const { rows: at } = await db.pool.query("SELECT tableoid::regclass::text AS p FROM events WHERE id = 'evt_part_new'");
    expect(at).toEqual([{ p: partitionName("events", new Date()) }]);
  });
});

describe("months without a partition, maintenance, drops", () => {
  it("one statement may write events and their deliveries (fixtures do): the event keys are there by the commit", async () => {
    await db.pool.query(
      `WITH e AS (INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_cte_' || i, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 3) i RETURNING id, created_at)
       INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at) SELECT md5(e.id), e.id, 'sub_part', 'assignment.graded', e.created_at FROM e`,
    );
    expect((await db.pool.query("SELECT count(*)::int AS n FROM event_keys WHERE id LIKE 'evt_cte_%'")).rows[0].n).toBe(3);
  });

  it("a row for a month with no partition is kept in the default partition and moved when the month is made", async () => {
    const far = new Date(Date.UTC(new Date().getUTCFullYear() + 3, 4, 10));
    await db.pool.query(`INSERT INTO events (id, type, payload, occurred_at, created_at) VALUES ('evt_far', 'assignment.graded', '\\x7b7d', now(), $1)`, [far]);
    const { rows: d } = await db.pool.query("SELECT id FROM deliveries LIMIT 1");
    await db.pool.query(
      `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome, created_at)
       VALUES ($1, 'sub_part', 9, 'scheduled', now(), 'retry', $2)`,
      [d[0].id, far],
    );
    const where = async () =>
      (
        await db.pool.query(`SELECT tableoid::regclass::text AS p FROM events WHERE id = 'evt_far'
                            UNION ALL SELECT tableoid::regclass::text FROM attempts WHERE attempt_number = 9 ORDER BY 1`)
      ).rows.map((r) => r.p);
    expect(await where()).toEqual(["attempts_default", "events_default"]);
    const created = await ensurePartitions(db.pool, { now: far, from: far, ahead: 0 });
    // deliveries has months too (by event_at, migration 0029); this month's is made beside the other two.
    expect(created.sort()).toEqual([partitionName("attempts", far), partitionName("deliveries", far), partitionName("events", far)]);
    expect(await where()).toEqual([partitionName("attempts", far), partitionName("events", far)]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM event_keys WHERE id = 'evt_far'")).rows[0].n).toBe(1);
  });

  it("creating partitions is idempotent and safe when several processes do it at once", async () => {
    const at = new Date(Date.UTC(new Date().getUTCFullYear() + 5, 0, 15));
    const runs = await Promise.all(Array.from({ length: 4 }, () => ensurePartitions(db.pool, { now: at, from: at, ahead: 2 })));
    const all = runs.flat().sort();
    expect(all).toEqual([0, 1, 2].flatMap((k) => ["events", "attempts", "deliveries"].map((t) => partitionName(t as "events", monthStart(at, k)))).sort());
    expect(await ensurePartitions(db.pool, { now: at, from: at, ahead: 2 })).toEqual([]);
  });

  it("the current month and two ahead exist, with bounds and sizes", async () => {
    await ensurePartitions(db.pool);
    const parts = await listPartitions(db.pool);
    for (const t of ["events", "attempts"] as const) {
      for (const k of [0, 1, 2]) {
        const p = parts.find((x) => x.name === partitionName(t, monthStart(new Date(), k)));
        expect(p).toMatchObject({ table: t, isDefault: false, from: monthStart(new Date(), k), to: monthStart(new Date(), k + 1) });
        expect(p!.bytes).toBeGreaterThan(0);
      }
      expect(parts.filter((x) => x.table === t && x.isDefault).map((x) => x.name)).toEqual([`${t}_default`]);
    }
  });

  it("drops one whole past month and refuses the default, the current month and an events month whose keys remain", async () => {
    const past = monthStart(new Date(), -2);
    // Keeping nothing: the whole month goes.
    const dropPartition = (name: string) => swapPartition(db.pool, name, sql`false`);
    await expect(dropPartition("attempts_default")).rejects.toBeInstanceOf(PartitionDropRefused);
    await expect(dropPartition(partitionName("attempts", new Date()))).rejects.toBeInstanceOf(PartitionDropRefused);
    await expect(dropPartition("deliveries")).rejects.toBeInstanceOf(PartitionDropRefused);
    // A past month of deliveries is never swapped (its detach would wait on the worker's cycles): it is emptied in place.
    await expect(dropPartition(partitionName("deliveries", past))).rejects.toThrow(/not a partition of events or attempts/);
    await expect(dropPartition(partitionName("events", past))).rejects.toThrow(/still in event_keys/);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id IN ('evt_part_1', 'evt_part_2')")).rows[0].n).toBe(2);

    const month3 = partitionName("events", monthStart(new Date(), -3));
    expect(await dropPartition(month3)).toEqual({ table: "events", removed: 0, kept: 0, swapped: true });
    expect(await dropPartition(partitionName("attempts", past))).toEqual({ table: "attempts", removed: 0, kept: 0, swapped: true });
    const names = (await listPartitions(db.pool)).map((p) => p.name);
    expect(names).not.toContain(month3);
    expect(names).toContain(partitionName("events", past));
  });
});
