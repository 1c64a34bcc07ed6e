// GET /api/v1/deliveries?q= resolves the value inside one statement, bounded
// and confined to the caller's tenant there: a value common to 1,100 of
// Jefferson's events never brings those events (or their ids) back to the
// server for a Lincoln caller, and no statement hands the server more rows
// than a page, for anyone. Pages still reach every match, newest first.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createApiToken } from "../../lib/auth/tokens";
import { listDeliveries, ZListDeliveries } from "../../lib/deliveries/queries";
import type { LedgerDb } from "../../lib/ledger/read/db";
import { GLOBAL_SCOPE, scopeOf } from "../../lib/tenants/scope";
import * as deliveries from "../../app/api/v1/deliveries/route";

let db: TestDb;
const JEFF_EVENTS = 1100;

/**
 * Events `evt_<prefix>_<n>` for studentId stu_common, one a minute back from now, each with a delivery to `sub` whose id
 * carries its event's time, as the ingest writes them (a delivery id's first 14 hex digits are microseconds since 1970).
 */
async function seed(prefix: string, tenant: string, sub: string, count: number, minutesBack: number) {
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
     SELECT 'evt_' || $1 || '_' || g, 'assignment.graded', convert_to('{}', 'UTF8'), t, $2,
            jsonb_build_object('tenant', $2::text, 'studentId', 'stu_common'), ARRAY[$2, 'tenant:' || $2, 'stu_common', 'studentId:stu_common'], t
       FROM generate_series(1, $3::int) g, LATERAL (SELECT now() - make_interval(mins => $4::int + g)) x(t)`,
    [prefix, tenant, count, minutesBack],
  );
  await db.pool.query(
    `INSERT INTO deliveries (id, delivery_key, event_id, subscription_id, event_type, state, delivered_at, event_at)
     SELECT 'dlv_' || lpad(to_hex((extract(epoch FROM k.created_at) * 1000000)::bigint + 1000), 14, '0') || lpad(to_hex(g), 12, '0'),
            hl_delivery_key($3, k.id), k.id, $3, 'assignment.graded', 'delivered', k.created_at, k.created_at
       FROM generate_series(1, $2::int) g JOIN event_keys k ON k.id = 'evt_' || $1 || '_' || g`,
    [prefix, count, sub],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  await db.pool.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES
       ('sub_l', 'Lincoln', 'lincoln', 'https://l.example.test/h', '{assignment.graded}'),
       ('sub_j', 'Jefferson', 'jefferson', 'https://j.example.test/h', '{assignment.graded}')`,
  );
  await seed("jeff", "jefferson", "sub_j", JEFF_EVENTS, 0);
  await seed("linc", "lincoln", "sub_l", 3, 30);
});
afterAll(async () => db?.close());

/** The pool, recording each statement and what it hands back to the server. */
function recording(pool: pg.Pool) {
  const results: unknown[][] = [];
  const statements: { text: string; values?: unknown[] }[] = [];
  const db = {
    query: async (text: string, values?: unknown[]) => {
      const r = await pool.query(text, values);
      statements.push({ text, values });
      results.push(r.rows);
      return r;
    },
  };
  return { db: db as unknown as LedgerDb, results, statements };
}

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Actual Rows": number; Plans?: PlanNode[] };
const walk = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(walk)];

describe("q is resolved in the query, bounded and scoped", () => {
  it("a Lincoln caller: Lincoln's three deliveries, and no statement returns any of Jefferson's events", async () => {
    const { db: rec, results } = recording(db.pool);
    const page = await listDeliveries(rec, ZListDeliveries.parse({ q: "stu_common", limit: 50 }), scopeOf({ tenantId: "lincoln" }));
    expect(page.items.map((d) => d.eventId).sort()).toEqual(["evt_linc_1", "evt_linc_2", "evt_linc_3"]);
    expect(page.nextCursor).toBeNull();
    for (const rows of results) {
      expect(rows.length).toBeLessThanOrEqual(51);
      expect(JSON.stringify(rows)).not.toContain("evt_jeff");
    }
  });

  it("a global caller: no statement returns more than a page, and the pages reach all 1,103 matches, newest first", async () => {
    const { db: rec, results } = recording(db.pool);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await listDeliveries(rec, ZListDeliveries.parse({ q: "stu_common", limit: 200, ...(cursor ? { cursor } : {}) }), GLOBAL_SCOPE);
      seen.push(...page.items.map((d) => d.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(JEFF_EVENTS + 3);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort().reverse()).toEqual(seen);
    for (const rows of results) expect(rows.length).toBeLessThanOrEqual(201);
  });

  it("a page reaches the deliveries written in the same millisecond as their event (the cursor's time is not cut to the millisecond below)", async () => {
    // One event fanned out to two subscriptions, both deliveries inside the event's millisecond: a second page bounded
    // by the cursor's millisecond rounded down would leave the event out, and its other delivery with it.
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ('sub_l2', 'Lincoln LMS', 'lincoln', 'https://l2.example.test/h', '{assignment.graded}')`,
    );
    await db.pool.query(
      `WITH t AS (SELECT date_trunc('milliseconds', now()) - interval '5 minutes' + interval '500 microseconds' AS at)
       INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
       SELECT 'evt_same_ms', 'assignment.graded', convert_to('{}', 'UTF8'), at, 'lincoln',
              '{"tenant": "lincoln", "studentId": "stu_same_ms"}', ARRAY['lincoln', 'tenant:lincoln', 'stu_same_ms', 'studentId:stu_same_ms'], at FROM t`,
    );
    await db.pool.query(
      `INSERT INTO deliveries (id, delivery_key, event_id, subscription_id, event_type, state, delivered_at, event_at)
       SELECT 'dlv_' || lpad(to_hex((extract(epoch FROM k.created_at) * 1000000)::bigint + x.us), 14, '0') || lpad(to_hex(x.us), 12, '0'),
              hl_delivery_key(x.sub, k.id), k.id, x.sub, 'assignment.graded', 'delivered', k.created_at, k.created_at
         FROM event_keys k, (VALUES ('sub_l', 100), ('sub_l2', 200)) x(sub, us) WHERE k.id = 'evt_same_ms'`,
    );
    const first = await listDeliveries(db.pool as unknown as LedgerDb, ZListDeliveries.parse({ q: "stu_same_ms", limit: 1 }), GLOBAL_SCOPE);
    expect(first.items.map((d) => d.subscriptionId)).toEqual(["sub_l2"]);
    const second = await listDeliveries(db.pool as unknown as LedgerDb, ZListDeliveries.parse({ q: "stu_same_ms", limit: 1, cursor: first.nextCursor! }), GLOBAL_SCOPE);
    expect(second.items.map((d) => d.subscriptionId)).toEqual(["sub_l"]);
  });

  it("the events a value matches are cut off inside the statement (a LIMIT above the events scan)", async () => {
    const { db: rec, statements } = recording(db.pool);
    await listDeliveries(rec, ZListDeliveries.parse({ q: "stu_common", limit: 10 }), GLOBAL_SCOPE);
    const [{ text, values }] = statements.slice(-1);
    const plan = (await db.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)).rows[0]["QUERY PLAN"][0].Plan as PlanNode;
    const limits = walk(plan).filter((n) => n["Node Type"] === "Limit" && walk(n).some((c) => c["Relation Name"]?.startsWith("events")));
    expect(limits.length).toBeGreaterThan(0);
    for (const l of limits) expect(l["Actual Rows"]).toBeLessThanOrEqual(1000);
  });

  it("an event id or a delivery key still finds its one delivery, in the caller's tenant only", async () => {
    const lincoln = (await createApiToken(db.prisma, { role: "support", name: "l", tenantId: "lincoln" })).token;
    const own = await call(deliveries.GET, { path: "/api/v1/deliveries?q=evt_linc_2", token: lincoln });
    expect(own.json.items.map((d: { eventId: string }) => d.eventId)).toEqual(["evt_linc_2"]);
    const key = own.json.items[0].deliveryKey;
    expect((await call(deliveries.GET, { path: `/api/v1/deliveries?q=${key}`, token: lincoln })).json.items).toHaveLength(1);
    expect((await call(deliveries.GET, { path: "/api/v1/deliveries?q=evt_jeff_7", token: lincoln })).json.items).toEqual([]);
  });
});
