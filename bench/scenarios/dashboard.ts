// 7. Dashboard at scale: a ledger of ~1,000,000 deliveries, ~3,000,000
// attempts and 200 subscriptions written with generate_series (secondary
// indexes dropped during the load and rebuilt from their own definitions,
// trigger-kept counters recomputed), rolled up by the real sampler, then the
// real dashboard query functions timed with varied inputs. `dashboard10m`
// runs the same with 5,000,000 events (10,000,000 deliveries, ~30,000,000
// attempts) spread over 182 days, so six month partitions of events and
// attempts (made beforehand, as the maintenance would have) hold the data,
// and then times an erasure and a retention run on that ledger.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { summary, round } from "../lib/stats";
import { resetStatements, topStatements } from "../lib/pgstat";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { findSubscriptionDeliveries, findSubscriptionHealth, getSubscriptionOverview } from "../../lib/dashboard/subscriptions";
import { getDlqSummary, findDlqHistory } from "../../lib/dashboard/dead-letters";
import { listDeliveries } from "../../lib/deliveries/queries";
import { createPrisma, type PrismaClient } from "../../lib/db/prisma";
import { refreshHourlyStats, rollupAttemptStats, sampleDlq } from "../../lib/rollups/sampler";
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS } from "../../lib/ledger/read/latency";
import { ensurePartitions, listPartitions } from "../../lib/ledger/sql/partitions";
import type { Scope } from "../../lib/tenants/scope";
import { runScaleLifecycle } from "./scale-lifecycle";

/** `spanDays`: how far back the events go (default 7). */
export type DashboardSizes = {
  events: number;
  subscriptions: number;
  iterations: number;
  spanDays?: number;
  name?: string;
  /** After the queries, on the same ledger: an erasure and a retention run (bench/scenarios/scale-lifecycle.ts). */
  lifecycle?: { retentionSeconds: number };
};

async function load(db: pg.Pool, s: DashboardSizes, _log: (m: string) => void) {
  const c = await db.connect();
  const timings: Record<string, number> = {};
  const timed = async (name: string, sql: string, params: unknown[] = []) => {
    const t = performance.now();
    const r = await c.query(sql, params);
    timings[name] = round((performance.now() - t) / 1000, 1);
    return r;
  };
  try {
    await c.query("SET statement_timeout = 0");
    await c.query("SET maintenance_work_mem = '256MB'");
    await c.query("SELECT setseed(0.42)");
    const tenants = s.subscriptions / 2;
    const spanDays = s.spanDays ?? 7;
    // Every month the seed writes has its partition, as the worker's maintenance would have made them as time went by.
    await ensurePartitions(db, { from: new Date(Date.now() - (spanDays + 1) * 86_400_000) });
    // 200 subscriptions, two per district (SIS and LMS); a few paused or disabled.
    await timed(
      "subscriptions",
      `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, state_reason, max_concurrency)
       SELECT 'sub_' || lpad(g::text, 3, '0'),
              'District ' || lpad(((g + 1) / 2)::text, 3, '0') || CASE WHEN g % 2 = 1 THEN ' SIS' ELSE ' LMS' END,
              'dist_' || lpad(((g + 1) / 2)::text, 3, '0'),
              'https://sis' || g || '.district.example/hooks', ARRAY['assignment.graded', 'assignment.submitted', 'course.enrolled'],
              CASE WHEN g % 97 = 0 THEN 'paused' WHEN g = 150 THEN 'disabled' ELSE 'active' END,
              CASE WHEN g = 150 THEN 'The endpoint answered 410 Gone.' END, 10
         FROM generate_series(1, $1::int) g`,
      [s.subscriptions],
    );
    // Secondary indexes off during the load, rebuilt below from their own definitions.
    const { rows: idx } = await c.query(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = 'public' AND i.tablename IN ('events', 'deliveries', 'attempts')
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname)`,
    );
    for (const i of idx) await c.query(`DROP INDEX ${i.indexname}`);
    let replica = true;
    try {
      // Skips per-row FK checks and the statement triggers; the counters they keep are recomputed below.
      await c.query("SET session_replication_role = replica");
    } catch {
      replica = false;
    }
    // Events over the last `spanDays` days (7 by default), districts skewed (a few large, many small),
    // 2,000 students per district, subject values as publishEvent stores them.
    await timed(
      "events",
      `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
       SELECT id, type, convert_to('{"id":"' || id || '","type":"' || type || '","timestamp":"' || at || '","data":{"studentId":"' || stu || '","assignmentId":"' || asg || '","score":' || (g % 100) || '}}', 'UTF8'),
              at, tenant, jsonb_build_object('tenant', tenant, 'studentId', stu, 'assignmentId', asg),
              ARRAY[tenant, 'tenant:' || tenant, stu, 'studentId:' || stu, asg, 'assignmentId:' || asg], at
         FROM (SELECT g, 'evt_' || lpad(g::text, 8, '0') AS id,
                      CASE WHEN g % 10 < 7 THEN 'assignment.graded' WHEN g % 10 < 9 THEN 'assignment.submitted' ELSE 'course.enrolled' END AS type,
                      now() - make_interval(days => $3) * (1 - g::float8 / $1) AS at, t,
                      'dist_' || lpad(t::text, 3, '0') AS tenant,
                      'stu_' || lpad(t::text, 3, '0') || '_' || lpad(floor(random() * 2000)::int::text, 4, '0') AS stu,
                      'asg_' || (g % 400) AS asg
                 FROM generate_series(1, $1::int) g, LATERAL (SELECT 1 + floor($2 * random() ^ 2 + 0 * g)::int AS t) tt) x`,
      [s.events, tenants, spanDays],
    );
    // The events' keys (migration 0021), which the events trigger writes when triggers are on.
    await timed("event_keys", "INSERT INTO event_keys (id, created_at) SELECT id, created_at FROM events ON CONFLICT (id) DO NOTHING");
    // Two deliveries per event (the district's two subscriptions). Older rows
    // are settled (delivered, or dead-lettered); the last day also holds
    // pending and scheduled ones. Sub 7 is a broken district: 30% dead letters.
    await timed(
      "deliveries",
      `INSERT INTO deliveries (id, delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, run_started_at,
                               next_attempt_at, last_attempt_at, last_status_code, last_error_class, last_error_message,
                               dead_letter_reason, dead_lettered_at, delivered_at, created_at, updated_at, event_at)
       SELECT 'dlv_' || lpad(to_hex((extract(epoch FROM x.created_at) * 1000000)::bigint + x.k), 14, '0') || substr(md5(x.id || x.k), 1, 12),
              hl_delivery_key(sub, x.id), x.id, sub, x.type, st, n, n, x.created_at,
              CASE WHEN st IN ('pending', 'scheduled') THEN now() + interval '1 minute' * (r * 60) ELSE x.created_at END,
              CASE WHEN n > 0 THEN x.created_at + interval '1 minute' * (n - 1) * (n - 1) END,
              CASE WHEN st = 'delivered' THEN 200 WHEN reason = 'permanent' THEN 422 WHEN reason = 'gone' THEN 410 WHEN st = 'pending' THEN NULL
                   WHEN r < 0.5 THEN 503 END,
              CASE WHEN st = 'delivered' OR st = 'pending' THEN NULL WHEN reason = 'permanent' THEN 'http_4xx' WHEN reason = 'gone' THEN 'http_410'
                   WHEN reason = 'target_blocked' THEN 'target_blocked' WHEN r < 0.5 THEN 'http_5xx' ELSE 'timeout' END,
              CASE WHEN st = 'delivered' OR st = 'pending' THEN NULL WHEN reason = 'permanent' THEN 'HTTP 422'
                   WHEN reason = 'gone' THEN 'HTTP 410' WHEN reason = 'target_blocked' THEN 'The target resolved to a private address.'
                   WHEN r < 0.5 THEN 'HTTP 503' ELSE 'No answer within 15000 ms; the request may have been received.' END,
              reason,
              CASE WHEN st = 'dead_letter' THEN least(now(), x.created_at + CASE WHEN reason = 'exhausted' THEN interval '31 hours' ELSE interval '1 second' END) END,
              CASE WHEN st = 'delivered' THEN x.created_at + interval '1 minute' * (n - 1) * (n - 1) + interval '150 ms' END,
              x.created_at, x.created_at, x.created_at
         FROM (SELECT e.*, s1.st, s2.reason,
                      CASE WHEN st = 'pending' THEN 0
                           WHEN st = 'scheduled' THEN 1 + floor(r * 4)::int
                           WHEN st = 'dead_letter' THEN CASE WHEN reason = 'exhausted' THEN 7 ELSE 1 END
                           ELSE CASE WHEN r2 < 0.35 THEN 1 WHEN r2 < 0.50 THEN 2 WHEN r2 < 0.62 THEN 3 WHEN r2 < 0.75 THEN 4 WHEN r2 < 0.88 THEN 5 ELSE 6 END END AS n
                 FROM (SELECT e.id, e.type, e.created_at, gk.k, 'sub_' || lpad((2 * (substr(e.tenant, 6)::int) - 1 + gk.k)::text, 3, '0') AS sub, random() AS r, random() AS r2, random() AS r3,
                              e.created_at > now() - interval '1 day' AS recent
                         FROM events e, generate_series(0, 1) AS gk(k)) e,
                      LATERAL (SELECT CASE
                                 WHEN e.recent AND e.r3 < 0.02 THEN 'pending'
                                 WHEN e.recent AND e.r3 < 0.12 THEN 'scheduled'
                                 WHEN e.r3 < CASE WHEN e.sub = 'sub_007' THEN 0.30 ELSE 0.035 END THEN 'dead_letter'
                                 ELSE 'delivered' END AS st) s1,
                      LATERAL (SELECT CASE WHEN s1.st <> 'dead_letter' THEN NULL
                                 WHEN e.r < 0.55 THEN 'exhausted' WHEN e.r < 0.90 THEN 'permanent' WHEN e.r < 0.95 THEN 'gone' ELSE 'target_blocked' END AS reason) s2
              ) x`,
    );
    // One attempt row per attempt: earlier ones retried (503 or timeout), the last one decides.
    await timed(
      "attempts",
      `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code,
                             error_class, error_message, response_excerpt, worker_id, ambiguous, created_at)
       SELECT d.id, d.subscription_id, a, 'scheduled', t, dur,
              CASE WHEN a < d.total_attempts OR d.state = 'scheduled' THEN 'retry' WHEN d.state = 'delivered' THEN 'delivered' ELSE 'dead_letter' END,
              CASE WHEN a = d.total_attempts THEN d.last_status_code WHEN dur > 700 THEN NULL ELSE 503 END,
              CASE WHEN a = d.total_attempts THEN d.last_error_class WHEN dur > 700 THEN 'timeout' ELSE 'http_5xx' END,
              CASE WHEN a = d.total_attempts THEN d.last_error_message WHEN dur > 700 THEN 'No answer within 15000 ms.' ELSE 'HTTP 503' END,
              CASE WHEN a = d.total_attempts AND d.last_status_code = 422 THEN '{"error":"missing field term_id for student ' || d.event_id || '"}'
                   WHEN a < d.total_attempts AND dur <= 700 THEN '<html><body>503 Service Unavailable</body></html>' END,
              'worker-' || (a % 3), dur > 700, t + make_interval(secs => dur / 1000.0)
         FROM deliveries d, generate_series(1, d.total_attempts) a,
              LATERAL (SELECT least(now() - interval '1 second', d.created_at + interval '1 minute' * (a - 1) * (a - 1)) AS t,
                              (20 + 780 * random() ^ 3)::int AS dur) x`,
    );
    if (replica) await c.query("SET session_replication_role = origin");
    const tIdx = performance.now();
    // A partitioned table's index reads "CREATE INDEX … ON ONLY public.attempts …": as written it would make
    // the parent's index alone (invalid, no partition gets one) and every query below would seq-scan the months.
    for (const i of idx) await c.query(String(i.indexdef).replace(" ON ONLY ", " ON "));
    timings.indexes = round((performance.now() - tIdx) / 1000, 1);
    await timed(
      "counters",
      `WITH d AS (DELETE FROM delivery_state_counts RETURNING 1)
       INSERT INTO delivery_state_counts (subscription_id, state, reason, backend, n)
       SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END, 0, count(*)
         FROM deliveries GROUP BY 1, 2, 3`,
    );
    // DLQ depth history for the charts: one sample every 15 s over the last 24 h (what the sampler keeps).
    await timed(
      "dlq_history",
      `INSERT INTO dlq_samples (sampled_at, depth, oldest_at)
       SELECT now() - interval '15 seconds' * g, (30000 + 2000 * sin(g / 300.0))::int, now() - interval '7 days'
         FROM generate_series(1, 5760) g`,
    );
    await timed("analyze", "VACUUM ANALYZE");
  } finally {
    c.release();
  }
  return timings;
}

export async function runDashboard(benchPg: BenchPg, s: DashboardSizes, log: (m: string) => void) {
  const url = await benchPg.create(s.name ?? "dashboard");
  const db = new pg.Pool({ connectionString: url, max: 6, statement_timeout: 10_000 });
  db.on("error", () => {});
  const prisma = createPrisma(url);
  try {
    const t0 = performance.now();
    const timings = await load(db, s, log);
    // attempt_stats_minute as the sampler's rollup writes it (same buckets,
    // same histogram), computed in one pass, and attempt_stats_hour summed from
    // it by the rollup's own function; the real rollup then runs on top
    // (finding nothing left) so its watermark is honest.
    const tr = performance.now();
    const bucketIdx = `width_bucket(duration_ms, ARRAY[${LATENCY_BOUNDS_MS.map((b) => b + 1).join(",")}])`;
    const hist = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `count(*) FILTER (WHERE bi = ${i})::int`).join(", ");
    const c = await db.connect();
    try {
      await c.query("SET statement_timeout = 0");
      await c.query("SET work_mem = '256MB'");
      await c.query(
        `INSERT INTO attempt_stats_minute (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
         SELECT subscription_id, date_trunc('minute', started_at), count(*), count(*) FILTER (WHERE outcome = 'delivered'),
                count(*) FILTER (WHERE outcome = 'retry'), count(*) FILTER (WHERE outcome = 'dead_letter'), count(*) FILTER (WHERE outcome = 'abandoned'),
                ARRAY[${hist}]
           FROM (SELECT subscription_id, started_at, outcome,
                        CASE WHEN duration_ms IS NULL OR outcome = 'abandoned' THEN NULL ELSE ${bucketIdx} END AS bi
                   FROM attempts) a
          GROUP BY 1, 2`,
      );
      await refreshHourlyStats(c, null);
      await c.query(
        `INSERT INTO dashboard_rollups (name, last_id) SELECT 'attempt_stats', coalesce(max(id), 0) FROM attempts
         ON CONFLICT (name) DO UPDATE SET last_id = excluded.last_id`,
      );
    } finally {
      c.release();
    }
    const folded = await rollupAttemptStats(db, { settleSeconds: 0 });
    timings.rollup = round((performance.now() - tr) / 1000, 1);
    await sampleDlq(db, { minGapMs: 0 });
    // The rollup tables and DLQ samples are written after load()'s VACUUM ANALYZE; a live ledger's autovacuum
    // analyzes them as they grow. Unanalyzed, the planner misjudges them (the health list read them ~3x slower).
    await db.query("ANALYZE attempt_stats_minute, attempt_stats_hour, dlq_samples, dlq_sample_groups");
    const loadSeconds = round((performance.now() - t0) / 1000, 1);
    const { rows: counts } = await db.query(
      `SELECT (SELECT count(*)::int FROM subscriptions) AS subscriptions, (SELECT count(*)::int FROM events) AS events,
              (SELECT count(*)::int FROM deliveries) AS deliveries, (SELECT count(*)::int FROM attempts) AS attempts,
              (SELECT count(*)::int FROM attempt_stats_minute) AS stats_rows,
              (SELECT count(*)::int FROM attempt_stats_hour) AS stats_hour_rows,
              (SELECT json_object_agg(state, n) FROM (SELECT state, count(*)::int AS n FROM deliveries GROUP BY 1) x) AS states,
              (SELECT pg_size_pretty(pg_database_size(current_database()))) AS size`,
    );
    log(`dashboard: loaded ${JSON.stringify(counts[0])} in ${loadSeconds} s ${JSON.stringify(timings)}`);
    const partitions = (await listPartitions(db))
      .filter((p) => p.rowsEstimate > 0)
      .map((p) => ({ name: p.name, rows: Math.round(p.rowsEstimate), mb: Math.round(p.bytes / 1048576) }));
    log(`dashboard: partitions holding rows ${JSON.stringify(partitions)}`);

    const out = await measureDashboardQueries(db, prisma, s.iterations, benchPg.statStatements, log);
    const lifecycle =
      s.lifecycle && !KEEP ? await runScaleLifecycle(url, prisma, { spanDays: s.spanDays ?? 7, retentionSeconds: s.lifecycle.retentionSeconds }, log) : undefined;
    return {
      loaded: counts[0],
      spanDays: s.spanDays ?? 7,
      partitions,
      loadSeconds,
      loadTimings: timings,
      attemptsFoldedByTheRealRollupAfterTheLoad: folded,
      iterationsPerQuery: s.iterations,
      targetP95Ms: 150,
      queries: out,
      ...(lifecycle ? { lifecycle } : {}),
    };
  } finally {
    await prisma.$disconnect();
    await db.end();
    if (KEEP) await keepDatabase(benchPg, url, log);
    else await benchPg.drop(url);
  }
}

/**
 * BENCH_KEEP_DB=1 (with DATABASE_URL, a server that outlives the run) keeps
 * the seeded ledger as hl_kept_<name> and skips the lifecycle, which would
 * remove what it measures: a slow seed is then paid once, and each experiment
 * runs on a copy (`CREATE DATABASE x TEMPLATE hl_kept_dashboard10m`,
 * then `node bin/run-ts.mjs bench/lifecycle.ts <url of x>`).
 */
const KEEP = process.env.BENCH_KEEP_DB === "1";

async function keepDatabase(benchPg: BenchPg, url: string, log: (m: string) => void) {
  const from = new URL(url).pathname.slice(1);
  const to = `hl_kept_${from.replace(/^hl_bench_\d+_[0-9a-f]+_/, "")}`;
  const c = new pg.Client({ connectionString: benchPg.adminUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${to} WITH (FORCE)`);
    await c.query(`ALTER DATABASE ${from} RENAME TO ${to}`);
  } finally {
    await c.end();
  }
  log(`dashboard: kept the seeded ledger as ${to}`);
}

/**
 * The dashboard's queries, each as a global viewer and as one district's viewer, on inputs sampled from the
 * ledger: p50/p95 of up to `iterations` calls (15 s at most each), with the top statements of a slow one.
 */
export async function measureDashboardQueries(db: pg.Pool, prisma: PrismaClient, iterations: number, statStatements: boolean, log: (m: string) => void) {
  // Inputs: real student ids, subscriptions weighted by size (as support would land on them).
  // A 1% page sample of a large table; a small table may sample no page at all, so fall back to a plain read.
  const sample = async (col: string) => {
    const { rows } = await db.query(`SELECT ${col} FROM events TABLESAMPLE SYSTEM (1) LIMIT 200`);
    return rows.length >= 10 ? rows : (await db.query(`SELECT ${col} FROM events ORDER BY id LIMIT 200`)).rows;
  };
  const students = await sample(`subject->>'studentId' AS s, tenant AS t`);
  const eventIds = await sample("id, tenant AS t");
  const { rows: subIds } = await db.query(`SELECT id, tenant AS t FROM subscriptions ORDER BY id`);
  const pick = <T>(a: T[], i: number) => a[(i * 7919) % a.length];
  const cursors = new Map<string, string>();
  // Each query as a global viewer, then as a district's viewer (its tenant's rows only: the tenant
  // condition inside the finders), on inputs from that district.
  const variants: [string, (t: string | null) => Scope | undefined][] = [
    ["", () => undefined],
    [" [scoped to the input's tenant]", (t) => ({ tenantId: t })],
  ];
  const queries: Record<string, (i: number) => Promise<unknown>> = {};
  for (const [suffix, as] of variants) {
    Object.assign(queries, {
      [`lookup by student id (findLookupResults)${suffix}`]: (i: number) => findLookupResults({ q: pick(students, i).s }, db, as(pick(students, i).t)),
      [`lookup by event id (findLookupResults)${suffix}`]: (i: number) => findLookupResults({ q: pick(eventIds, i).id }, db, as(pick(eventIds, i).t)),
      [`subscription timeline, first page (findSubscriptionDeliveries)${suffix}`]: async (i: number) => {
        const sub = pick(subIds, i);
        const r = await findSubscriptionDeliveries({ subscriptionId: sub.id, scope: as(sub.t) }, db);
        if (r.nextCursor) cursors.set(sub.id, r.nextCursor);
        return r;
      },
      [`subscription timeline, next page (cursor)${suffix}`]: (i: number) => {
        const sub = pick(subIds, i);
        return findSubscriptionDeliveries({ subscriptionId: sub.id, cursor: cursors.get(sub.id), scope: as(sub.t) }, db);
      },
      [`subscription timeline, dead letters only${suffix}`]: (i: number) =>
        findSubscriptionDeliveries({ subscriptionId: pick(subIds, i).id, state: "dead_letter", scope: as(pick(subIds, i).t) }, db),
      [`DLQ depth now, by subscription and reason (getDlqSummary)${suffix}`]: (i: number) => getDlqSummary({ scope: as(pick(subIds, i).t) }, db),
      [`DLQ depth and age series, 24 h (findDlqHistory)${suffix}`]: (i: number) => findDlqHistory({ hours: 24, scope: as(pick(subIds, i).t) }, db),
      [`subscription health list, 200 subscriptions (findSubscriptionHealth)${suffix}`]: (i: number) => findSubscriptionHealth({ scope: as(pick(subIds, i).t) }, db),
      [`one subscription's overview (getSubscriptionOverview)${suffix}`]: (i: number) =>
        getSubscriptionOverview({ id: pick(subIds, i).id, scope: as(pick(subIds, i).t) }, db),
      [`API: GET /deliveries?q=<student id> (listDeliveries)${suffix}`]: (i: number) =>
        listDeliveries(db, { q: pick(students, i).s, limit: 50 }, as(pick(students, i).t)),
      [`API: GET /deliveries?subscriptionId= (listDeliveries)${suffix}`]: (i: number) =>
        listDeliveries(db, { subscriptionId: pick(subIds, i).id, limit: 50 }, as(pick(subIds, i).t)),
    });
  }
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(queries)) {
    const ms: number[] = [];
    let error: string | null = null;
    await resetStatements(db, statStatements);
    try {
      for (let i = 0; i < 3; i++) await fn(1000 + i); // warm-up
      await resetStatements(db, statStatements);
      // Bounded in count and in time: a slow query gets fewer calls, not a longer run.
      const end = performance.now() + 15_000;
      for (let i = 0; i < iterations && performance.now() < end; i++) {
        const t = performance.now();
        await fn(i);
        ms.push(performance.now() - t);
      }
    } catch (err) {
      error = (err as Error).message.split("\n")[0].slice(0, 300);
    }
    const sm = summary(ms);
    const slow = error !== null || (sm.p95 ?? 0) >= 150;
    out[name] = { ...sm, meetsTarget: !slow, ...(error ? { error } : {}), ...(slow ? { topStatements: await topStatements(db, statStatements, 3) } : {}) };
    log(`dashboard: ${name}: p50 ${sm.p50} ms, p95 ${sm.p95} ms${error ? ` (error: ${error})` : ""}`);
  }
  return out;
}
