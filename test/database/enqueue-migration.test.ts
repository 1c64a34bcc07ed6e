// Migration 0024 (the enqueue's cost) over a database that already holds
// events and deliveries: every row is kept, and the replaced hl_enqueue_events
// writes exactly what the one before it wrote for the same calls (the same
// events, subject values, hashes, deliveries and keys; the same republish
// answers), including the cases its one-pass reading of the arrays must get
// right: events without subject values, between events with some, a call
// without hashes, duplicate ids, and a call restricted to named subscriptions.
import { expect, it } from "vitest";
import type pg from "pg";
import { databaseBefore } from "../helpers/migration-db";

/** Calls hl_enqueue_events as lib/ledger/sql/enqueue.ts does; ids get `prefix`. */
async function enqueue(c: pg.Client, prefix: string, events: { id: string; sv: string[]; hash?: string }[], opts: { hashes?: boolean; only?: string[] } = {}) {
  const from: number[] = [];
  const to: number[] = [];
  const values: string[] = [];
  for (const e of events) {
    from.push(values.length + 1);
    values.push(...e.sv);
    to.push(values.length);
  }
  const { rows } = await c.query(
    `SELECT event_id, subscription_id, delivery_key FROM hl_enqueue_events($1::text[], $2::text[], $3::bytea[], $4::timestamptz[], $5::text[], $6::jsonb[], $7::text[], $8::int[], $9::int[], $10::text[], $11::bytea[])
      ORDER BY event_id, subscription_id`,
    [
      events.map((e) => prefix + e.id),
      events.map(() => "assignment.graded"),
      events.map((e) => Buffer.from(`{"id":"${e.id}"}`)),
      events.map(() => new Date("2026-11-30T10:00:00Z")),
      events.map((e) => (e.sv.length ? "lincoln" : null)),
      events.map((e) => JSON.stringify(e.sv.length ? { tenant: "lincoln" } : {})),
      values,
      from,
      to,
      opts.only ?? null,
      opts.hashes === false ? null : events.map((e) => (e.hash ? Buffer.from(e.hash) : null)),
    ],
  );
  return rows.map((r) => ({ ...r, event_id: r.event_id.slice(prefix.length), delivery_key: r.delivery_key && "set" }));
}

const CALLS: [Parameters<typeof enqueue>[2], Parameters<typeof enqueue>[3]][] = [
  [
    [
      { id: "e1", sv: ["lincoln", "tenant:lincoln", "stu_1"], hash: "h1" },
      { id: "e2", sv: [], hash: "h2" },
      { id: "e3", sv: ["lincoln", "tenant:lincoln"] },
      { id: "e4", sv: [] },
      { id: "e5", sv: ["lincoln", "stu_5", "studentId:stu_5", "x"], hash: "h5" },
    ],
    {},
  ],
  // A republish of e1 beside a new event, then a call without hashes, then one restricted to a subscription.
  [
    [
      { id: "e1", sv: ["lincoln"] },
      { id: "e6", sv: ["stu_6"] },
    ],
    {},
  ],
  [
    [
      { id: "e7", sv: ["a", "b"] },
      { id: "e8", sv: ["c"] },
    ],
    { hashes: false },
  ],
  [[{ id: "e9", sv: ["lincoln"] }], { only: ["sub_b"] }],
];

/** What the calls wrote under `prefix`, with the prefix and the generated ids and times left out. */
async function written(c: pg.Client, prefix: string) {
  const ev = await c.query(`SELECT substr(id, $2) AS id, type, payload, tenant, subject, subject_values, content_hash FROM events WHERE id LIKE $1 ORDER BY id`, [
    prefix + "%",
    prefix.length + 1,
  ]);
  const dl = await c.query(
    `SELECT substr(event_id, $2) AS event_id, subscription_id, delivery_key = hl_delivery_key(subscription_id, event_id) AS key_ok, state, event_type
       FROM deliveries WHERE event_id LIKE $1 ORDER BY event_id, subscription_id`,
    [prefix + "%", prefix.length + 1],
  );
  return { events: ev.rows, deliveries: dl.rows };
}

it("migration 0024 keeps every row, and the replaced enqueue writes what the one before it wrote", async () => {
  const mdb = await databaseBefore("0024");
  const c = mdb.client;
  try {
    await c.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES
         ('sub_a', 'a', NULL, 'https://a.example.test/h', '{assignment.graded}'),
         ('sub_b', 'b', 'lincoln', 'https://b.example.test/h', '{assignment.graded}'),
         ('sub_c', 'c', 'jefferson', 'https://c.example.test/h', '{assignment.graded}')`,
    );
    const before: unknown[] = [];
    for (const [events, opts] of CALLS) before.push(await enqueue(c, "old_", events, opts));
    const counts = async () =>
      (
        await c.query(
          "SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries, (SELECT count(*) FROM event_keys)::int AS keys",
        )
      ).rows[0];
    const held = await counts();
    const old = await written(c, "old_");

    expect(await mdb.applyRest()).toEqual(mdb.rest);
    expect(await counts()).toEqual(held);
    expect(await written(c, "old_")).toEqual(old);

    const after: unknown[] = [];
    for (const [events, opts] of CALLS) after.push(await enqueue(c, "new_", events, opts));
    expect(after).toEqual(before);
    expect(await written(c, "new_")).toEqual(old);
    // The cases themselves, so an equal mistake on both sides cannot pass: values kept per event, in order.
    expect(old.events.map((e) => [e.id, e.subject_values, e.content_hash?.toString() ?? null])).toEqual([
      ["e1", ["lincoln", "tenant:lincoln", "stu_1"], "h1"],
      ["e2", [], "h2"],
      ["e3", ["lincoln", "tenant:lincoln"], null],
      ["e4", [], null],
      ["e5", ["lincoln", "stu_5", "studentId:stu_5", "x"], "h5"],
      ["e6", ["stu_6"], null],
      ["e7", ["a", "b"], null],
      ["e8", ["c"], null],
      ["e9", ["lincoln"], null],
    ]);
    expect(old.deliveries.filter((d) => d.event_id === "e9").map((d) => d.subscription_id)).toEqual(["sub_b"]);
    expect(old.deliveries.every((d) => d.key_ok)).toBe(true);
    // The subscription's foreign key is gone (0024), and the event's after 0028: the ledger's statements hold both.
    const { rows: keys } = await c.query("SELECT conname FROM pg_constraint WHERE conrelid = 'deliveries'::regclass AND contype = 'f' ORDER BY 1");
    expect(keys.map((k) => k.conname)).toEqual([]);
  } finally {
    await mdb.close();
  }
});
