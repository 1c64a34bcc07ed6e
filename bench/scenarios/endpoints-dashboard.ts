// The dashboard at 10,000 subscriptions: 10,000 endpoints over 2,000
// districts (a few paused, disabled or archived), a tenth of them with a day
// of attempts, retries and dead letters so the health figures have something
// to read, rolled up by the real sampler. Then the Subscriptions page's data
// (a page of the health list, its tenant filter and event-type choices), a
// search, a later page by cursor, the other orders, a district's overview,
// the lookup's subscription names and the public API's page, each timed over
// `iterations` calls with varied inputs: p50/p95 against the 150 ms target.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { summary, round } from "../lib/stats";
import { resetStatements, topStatements } from "../lib/pgstat";
import { findEventTypeChoices, findSubscriptionHealth, findSubscriptionHealthPage, findTenants } from "../../lib/dashboard/subscriptions";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { listSubscriptionPage } from "../../lib/subscriptions/list";
import { createPrisma } from "../../lib/db/prisma";
import { rollupAttemptStats, sampleDlq } from "../../lib/rollups/sampler";
import { ensurePartitions } from "../../lib/ledger/sql/partitions";
import type { TListSubscriptions } from "../../lib/subscriptions/subscription-input";

export type EndpointsDashboardSizes = { subscriptions: number; tenants: number; iterations: number };

/** The page size the Subscriptions page asks for (app/(dashboard)/subscriptions/page-client.tsx). */
const PAGE = 50;
const TARGET_P95_MS = 150;

async function seed(db: pg.Pool, s: EndpointsDashboardSizes) {
  const t0 = performance.now();
  await ensurePartitions(db, { from: new Date(Date.now() - 3 * 86_400_000) });
  // Districts named like real ones, five endpoints each (SIS, LMS, gradebook…); every 97th paused, every 211th
  // disabled, every 301st archived. created_at spread over a year so the "created" order has something to order.
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, state_reason, paused_reason, created_at, archived_at, archive_reason, archived_by)
     SELECT 'sub_' || lpad(g::text, 5, '0'),
            (ARRAY['Lincoln', 'Jefferson', 'Riverside', 'Maple Grove', 'Cedar Falls', 'Westfield', 'Oak Ridge', 'Pine Hill', 'Lakeview', 'Summit'])[1 + t % 10]
              || ' ' || (ARRAY['Unified', 'County', 'ISD', 'Academy', 'Public Schools'])[1 + (t / 10) % 5] || ' ' || t || ' '
              || (ARRAY['SIS', 'LMS', 'Gradebook', 'Attendance', 'Roster sync'])[1 + g % 5],
            'dist_' || lpad(t::text, 4, '0'),
            'https://' || (ARRAY['sis', 'lms', 'grades', 'attend', 'roster'])[1 + g % 5] || '.d' || t || '.k12.example/hooks/hookledger',
            ARRAY['assignment.graded', 'attendance.recorded'],
            CASE WHEN g % 97 = 0 THEN 'paused' WHEN g % 211 = 0 THEN 'disabled' ELSE 'active' END,
            CASE WHEN g % 97 = 0 THEN 'paused by an operator' WHEN g % 211 = 0 THEN 'The endpoint answered 410 Gone.' END,
            CASE WHEN g % 97 = 0 THEN 'manual' END,
            now() - interval '365 days' * (1 - g::float8 / $1),
            CASE WHEN g % 301 = 0 THEN now() END, CASE WHEN g % 301 = 0 THEN 'replaced' END, CASE WHEN g % 301 = 0 THEN 'bench' END
       FROM generate_series(1, $1::int) g, LATERAL (SELECT 1 + (g - 1) % $2 AS t) tt`,
    [s.subscriptions, s.tenants],
  );
  // A day of traffic for every tenth endpoint: 20 events each, 1–4 attempts, a tenth dead-lettered, some retrying.
  await db.query(
    `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
     SELECT id, 'assignment.graded', convert_to('{"data":{"score":' || k || '}}', 'UTF8'), at, tenant,
            jsonb_build_object('tenant', tenant, 'studentId', 'stu_' || id), ARRAY[tenant, 'tenant:' || tenant], at
       FROM (SELECT 'evt_' || s.id || '_' || k AS id, k, s.tenant, now() - interval '23 hours' * random() AS at
               FROM subscriptions s, generate_series(1, 20) k WHERE substr(s.id, 5)::int % 10 = 0) x`,
  );
  await db.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, run_started_at, next_attempt_at,
                             last_attempt_at, last_status_code, last_error_class, last_error_message, dead_letter_reason, dead_lettered_at, delivered_at,
                             created_at, updated_at, event_at)
     SELECT hl_delivery_key(sid, eid), eid, sid, type, st, n, n, at,
            CASE WHEN st = 'scheduled' THEN now() + interval '5 minutes' ELSE at END,
            at + interval '1 minute' * n,
            CASE WHEN st = 'delivered' THEN 200 WHEN st = 'dead_letter' THEN 422 ELSE 503 END,
            CASE WHEN st = 'delivered' THEN NULL WHEN st = 'dead_letter' THEN 'http_4xx' ELSE 'http_5xx' END,
            CASE WHEN st = 'delivered' THEN NULL WHEN st = 'dead_letter' THEN 'HTTP 422' ELSE 'HTTP 503' END,
            CASE WHEN st = 'dead_letter' THEN 'permanent' END,
            CASE WHEN st = 'dead_letter' THEN at + interval '1 minute' * n END,
            CASE WHEN st = 'delivered' THEN at + interval '1 minute' * n END,
            at, at, at
       FROM (SELECT s.id AS sid, e.id AS eid, e.type, e.created_at AS at, 1 + floor(random() * 4)::int AS n,
                    CASE WHEN r < 0.1 THEN 'dead_letter' WHEN r < 0.15 THEN 'scheduled' ELSE 'delivered' END AS st
               FROM (SELECT s.*, k, random() AS r FROM subscriptions s, generate_series(1, 20) k WHERE substr(s.id, 5)::int % 10 = 0) s
               JOIN events e ON e.id = 'evt_' || s.id || '_' || s.k) x`,
  );
  await db.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, error_class, error_message, worker_id, created_at)
     SELECT d.id, d.subscription_id, a, 'scheduled', d.created_at + interval '1 minute' * (a - 1), (30 + 400 * random() ^ 3)::int,
            CASE WHEN a < d.total_attempts OR d.state = 'scheduled' THEN 'retry' WHEN d.state = 'delivered' THEN 'delivered' ELSE 'dead_letter' END,
            CASE WHEN a = d.total_attempts THEN d.last_status_code ELSE 503 END,
            CASE WHEN a = d.total_attempts THEN d.last_error_class ELSE 'http_5xx' END,
            CASE WHEN a = d.total_attempts THEN d.last_error_message ELSE 'HTTP 503' END,
            'bench', d.created_at + interval '1 minute' * (a - 1)
       FROM deliveries d, generate_series(1, d.total_attempts) a`,
  );
  await rollupAttemptStats(db, { settleSeconds: 0, maxChunks: 1000 });
  await sampleDlq(db, { minGapMs: 0 });
  await db.query("VACUUM ANALYZE");
  const { rows } = await db.query(
    `SELECT (SELECT count(*)::int FROM subscriptions) AS subscriptions, (SELECT count(DISTINCT tenant)::int FROM subscriptions) AS tenants,
            (SELECT count(*)::int FROM deliveries) AS deliveries, (SELECT count(*)::int FROM attempts) AS attempts,
            (SELECT count(*)::int FROM deliveries WHERE state = 'dead_letter') AS dead_letters`,
  );
  return { ...rows[0], seedSeconds: round((performance.now() - t0) / 1000, 1) };
}

export async function runEndpointsDashboard(benchPg: BenchPg, s: EndpointsDashboardSizes, log: (m: string) => void) {
  const url = await benchPg.create("endpoints_dashboard");
  const db = new pg.Pool({ connectionString: url, max: 6, statement_timeout: 10_000 });
  db.on("error", () => {});
  const prisma = createPrisma(url);
  try {
    const loaded = await seed(db, s);
    log(`endpoints_dashboard: seeded ${JSON.stringify(loaded)}`);
    const { rows: subs } = await db.query<{ id: string; name: string; tenant: string }>(`SELECT id, name, tenant FROM subscriptions ORDER BY id`);
    const pick = <T>(a: T[], i: number) => a[(i * 7919) % a.length];
    // Searches as people type them: part of a district's name, a tenant id, a subscription id, part of a URL, a word
    // that matches thousands (LMS), and one that matches nothing.
    const searches = (i: number) => {
      const sub = pick(subs, i);
      return [sub.name.split(" ").slice(0, 3).join(" ").toLowerCase(), sub.tenant, sub.id, `d${sub.tenant.slice(5).replace(/^0+/, "")}.k12`, "LMS", "no such district"][
        i % 6
      ];
    };
    // Cursors a page deep into each order, collected by paging once (as a viewer clicking Next would hold them).
    const cursors: Record<string, string[]> = {};
    for (const sort of ["name", "-created", "state"] as const) {
      cursors[sort] = [];
      let cursor: string | null | undefined;
      do {
        const page = await findSubscriptionHealthPage({ sort, limit: PAGE, cursor: cursor ?? undefined }, db);
        if (page.nextCursor) cursors[sort].push(page.nextCursor);
        cursor = page.nextCursor;
      } while (cursor);
    }
    const healthPage = (q: TListSubscriptions, scope?: { tenantId: string }) => findSubscriptionHealthPage({ limit: PAGE, ...q, scope }, db);
    const queries: Record<string, (i: number) => Promise<unknown>> = {
      // What app/(dashboard)/subscriptions/page.tsx loads before the first rows show: one page, the tenant filter, the event types.
      "Subscriptions page data, first page (health page + tenants + event types)": () =>
        Promise.all([healthPage({}), findTenants(db), findEventTypeChoices(undefined, db)]),
      "health page, first page by name (findSubscriptionHealthPage)": () => healthPage({}),
      "health page, a search (q: name, tenant, id, URL, common word, none)": (i) => healthPage({ q: searches(i) }),
      "health page, a later page by cursor (sort=name)": (i) => healthPage({ cursor: pick(cursors.name, i) }),
      "health page, newest first, a later page (sort=-created)": (i) => healthPage({ sort: "-created", cursor: pick(cursors["-created"], i) }),
      "health page, by state, a later page (sort=state)": (i) => healthPage({ sort: "state", cursor: pick(cursors.state, i) }),
      "health page, paused only (state=paused)": () => healthPage({ state: "paused" }),
      "a district's overview (health page scoped to its tenant)": (i) => healthPage({}, { tenantId: pick(subs, i).tenant }),
      "a district's Subscriptions page data (scoped)": (i) =>
        Promise.all([
          healthPage({}, { tenantId: pick(subs, i).tenant }),
          findTenants(db, { tenantId: pick(subs, i).tenant }),
          findEventTypeChoices({ tenantId: pick(subs, i).tenant }, db),
        ]),
      "lookup by a subscription's name (findLookupResults)": (i) => findLookupResults({ q: pick(subs, i).name.split(" ").slice(0, 2).join(" ") }, db),
      "API: GET /subscriptions, first page of 100 (listSubscriptionPage)": () => listSubscriptionPage(prisma, {}, undefined, db),
      "API: GET /subscriptions?q= (listSubscriptionPage)": (i) => listSubscriptionPage(prisma, { q: searches(i) }, undefined, db),
      "API: GET /subscriptions, a later page by cursor": (i) => listSubscriptionPage(prisma, { cursor: pick(cursors.name, i) }, undefined, db),
      // The list as every poll read it before it paged: the first 500 subscriptions' figures (it stopped there).
      "before: the unpaged health list (findSubscriptionHealth, 500 rows)": () => findSubscriptionHealth({}, db),
    };
    const out: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(queries)) {
      const ms: number[] = [];
      for (let i = 0; i < 3; i++) await fn(1000 + i); // warm-up
      await resetStatements(db, benchPg.statStatements);
      for (let i = 0; i < s.iterations; i++) {
        const t = performance.now();
        await fn(i);
        ms.push(performance.now() - t);
      }
      const sm = summary(ms);
      const slow = (sm.p95 ?? 0) >= TARGET_P95_MS;
      out[name] = { ...sm, meetsTarget: !slow, ...(slow ? { topStatements: await topStatements(db, benchPg.statStatements, 3) } : {}) };
      log(`endpoints_dashboard: ${name}: p50 ${sm.p50} ms, p95 ${sm.p95} ms`);
    }
    return { loaded, pageSize: PAGE, iterationsPerQuery: s.iterations, targetP95Ms: TARGET_P95_MS, queries: out };
  } finally {
    await prisma.$disconnect();
    await db.end();
    await benchPg.drop(url);
  }
}
