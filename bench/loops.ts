// What each background loop costs per run as idle subscriptions pile up: the
// worker's reaper, probe claim, redrive pacer, heartbeat, partition maintenance
// and notifier (its round of notices and its claim of the due ones), the
// dashboard's sampler (DLQ sample and attempt rollup), its Prometheus scrape
// (GET /metrics), its alerts page and the DLQ page's charts (an operator's and
// a district's). A loop that runs per cycle or per poll should cost what is
// due, not what exists: adding the ten-thousandth district must not slow the
// other districts' loops.
//
// For each size (20, 5,000 and 50,000 idle subscriptions in a full run) a fresh
// database gets that many idle subscriptions, seeded in SQL (each with a
// delivered delivery, its attempt and its rolled-up minute an hour ago, a
// signing secret and a notice sent a week ago; one in twenty paused for failing
// with its next probe an hour away, one in fifty disabled; 25 to a district,
// each district with two contacts), and the same small due work: three busy
// subscriptions with 1,000 due deliveries each, 100 leased (20 of the leases
// expired), 200 dead letters each in two reasons, five subscriptions paused for
// failing whose probe is due, a running redrive batch of 2,000 dead letters at
// 100/s, 300 fresh attempts for each rollup, five signing secrets whose overlap
// ends within the day and 30 notices due; and two days of DLQ samples, one a
// minute, each with a group for one idle subscription in 50 beside the busy
// ones' (seedDlqHistory). Each loop's statements run `runs`
// times; a run that would change the due work (the reaper, the probe claim, the
// notifier's claim) runs in a transaction that is rolled back, so every run
// finds the same work. Reported per loop and size: the median time of a run,
// and the buffers a run touched (pg_stat_statements, shared hit + read of the
// top-level statements, when available); then the ratio of the largest size to
// the smallest.
//
//   npm run bench -- --only loops [--quick|--tiny]
//   node bin/run-ts.mjs bench/loops.ts [--subs 50000] [--full-plans]   EXPLAIN (ANALYZE, BUFFERS) of every loop's statements at one size
import { randomBytes } from "node:crypto";
import pg from "pg";
import pino from "pino";
import type { BenchPg } from "./lib/pg";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.LOG_LEVEL ??= "warn";

const { abandonLeases } = await import("../lib/ledger/sql/abandon-leases");
const { claimDueProbes } = await import("../lib/ledger/sql/probe");
const { sampleDlq, rollupAttemptStats, NOTIFIER_DLQ_SAMPLE_MINUTES } = await import("../lib/rollups/sampler");
const { startRedrivePacer } = await import("../worker/redrive-pacer");
const { heartbeat } = await import("../worker/heartbeat");
const { loadFreezes } = await import("../lib/ledger/sql/freeze");
const { ensurePartitions } = await import("../lib/ledger/sql/partitions");
const { renderDashboardMetrics } = await import("../lib/metrics/dashboard");
const { findAlertConditions } = await import("../lib/metrics/alerts");
const { seedDeliveries } = await import("./lib/seed");
const { createPrisma } = await import("../lib/db/prisma");
const { createRedriveBatch } = await import("../lib/redrive/redrive-batches");
const { SYSTEM } = await import("../lib/auth/principal");
const { ingestRound } = await import("../lib/notify/ingest");
const { claimDueNotifications } = await import("../lib/ledger/sql/notifications");
const { findDlqHistory } = await import("../lib/dashboard/dead-letters");

const quiet = pino({ level: "silent" });
const BUSY = ["sub_busy_1", "sub_busy_2", "sub_busy_3"];

/** The idle subscriptions and the due work described at the top of the file. */
async function seed(db: pg.Pool, url: string, idle: number): Promise<void> {
  // One district per 25 idle subscriptions (2,000 at 50,000), and one for the due work's.
  await db.query(
    `INSERT INTO tenants (id, name) SELECT 'tnt_' || lpad(t::text, 5, '0'), 'District ' || t FROM generate_series(1, $1::int) t
     UNION ALL SELECT 'tnt_busy', 'Busy district'`,
    [Math.ceil(idle / 25)],
  );
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, paused_reason, paused_at, failing_since, next_probe_at, created_at)
     SELECT 'sub_idle_' || lpad(i::text, 6, '0'), 'District ' || i, 'tnt_' || lpad((1 + i % ceil($1::int / 25.0)::int)::text, 5, '0'),
            'https://d' || i || '.example.test/hooks', '{assignment.graded}',
            CASE WHEN i % 20 = 0 THEN 'paused' WHEN i % 50 = 1 THEN 'disabled' ELSE 'active' END,
            CASE WHEN i % 20 = 0 THEN 'failing' END, CASE WHEN i % 20 = 0 THEN now() - interval '1 day' END,
            CASE WHEN i % 20 = 0 THEN now() - interval '1 day' END, CASE WHEN i % 20 = 0 THEN now() + interval '1 hour' END,
            now() - interval '30 days'
       FROM generate_series(1, $1::int) i`,
    [idle],
  );
  // History: one delivered delivery each, its attempt and its minute, an hour ago (the rollup's watermark is past them).
  await db.query(
    `INSERT INTO events (id, type, payload, occurred_at, created_at)
     SELECT 'evt_idle_' || i, 'assignment.graded', '\\x7b7d'::bytea, now() - interval '1 hour', now() - interval '1 hour' FROM generate_series(1, $1::int) i`,
    [idle],
  );
  await db.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, delivered_at, last_attempt_at,
                             last_status_code, event_at, created_at)
     SELECT hl_delivery_key(s, k.id), k.id, s, 'assignment.graded', 'delivered', 1, 1, k.created_at, k.created_at, 200, k.created_at, k.created_at
       FROM generate_series(1, $1::int) i JOIN event_keys k ON k.id = 'evt_idle_' || i,
            LATERAL (SELECT 'sub_idle_' || lpad(i::text, 6, '0') AS s) x`,
    [idle],
  );
  await db.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, created_at)
     SELECT id, subscription_id, 1, 'scheduled', delivered_at, 40, 'delivered', 200, delivered_at FROM deliveries WHERE state = 'delivered'`,
  );
  await db.query(
    `INSERT INTO attempt_stats_minute (subscription_id, bucket, attempts, delivered, retried, dead_lettered, abandoned, latency_hist)
     SELECT subscription_id, date_trunc('minute', started_at), 1, 1, 0, 0, 0, '{}'::int[] FROM attempts`,
  );
  await db.query(
    `INSERT INTO dashboard_rollups (name, last_id) SELECT 'attempt_stats', coalesce(max(id), 0) FROM attempts
     ON CONFLICT (name) DO UPDATE SET last_id = EXCLUDED.last_id`,
  );

  // The due work, the same at every size.
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types, max_concurrency)
     SELECT s, s, 'tnt_busy', 'https://' || s || '.example.test/hooks', '{assignment.graded}', 1000 FROM unnest($1::text[]) s`,
    [[...BUSY, "sub_redrive"]],
  );
  await db.query(
    `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, paused_reason, paused_at, failing_since, next_probe_at)
     SELECT 'sub_probe_' || i, 'Probe ' || i, 'tnt_busy', 'https://p' || i || '.example.test/hooks', '{assignment.graded}', 'paused', 'failing',
            now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 minute'
       FROM generate_series(1, 5) i`,
  );
  await seedDeliveries(db, { prefix: "evt_due_", count: 3_000, subs: BUSY, payloadBytes: 200, dueOffsetSql: "-interval '1 minute'" });
  await seedDeliveries(db, { prefix: "evt_dead_", count: 600, subs: BUSY, payloadBytes: 200, state: "dead_letter", attemptCount: 6 });
  await db.query(
    `UPDATE deliveries SET dead_letter_reason = 'permanent', last_error_class = 'http_4xx', last_status_code = 422
      WHERE state = 'dead_letter' AND event_id LIKE 'evt_dead_%' AND substr(event_id, 10)::int % 2 = 0`,
  );
  await seedDeliveries(db, { prefix: "evt_redrive_", count: 2_000, subs: ["sub_redrive"], payloadBytes: 200, state: "dead_letter", attemptCount: 6 });
  // 100 of the due rows of each busy subscription leased by a worker; 20 of those leases expired.
  await db.query(
    `UPDATE deliveries d SET state = 'in_flight', lease_owner = 'w_elsewhere', leased_at = now() - interval '10 minutes',
            lease_until = CASE WHEN x.n <= 20 THEN now() - interval '5 minutes' ELSE now() + interval '1 hour' END
       FROM (SELECT id, row_number() OVER (PARTITION BY subscription_id ORDER BY id) AS n FROM deliveries
              WHERE subscription_id = ANY($1::text[]) AND state = 'pending') x
      WHERE d.id = x.id AND x.n <= 100`,
    [BUSY],
  );
  const prisma = createPrisma(url);
  try {
    await createRedriveBatch(
      prisma,
      { filter: { subscriptionId: "sub_redrive" }, reason: "bench: the district fixed its importer", ratePerSecond: 100, latestStateWins: false },
      { ...SYSTEM, actor: "bench" },
    );
  } finally {
    await prisma.$disconnect();
  }
  await seedDistricts(db);
  await seedDlqHistory(db);
  // A running system folds its counters at every scrape: the per-backend rows the seeding wrote are folded before the statistics are taken.
  await db.query("SELECT hl_fold_delivery_state_counts()");
  await db.query("VACUUM ANALYZE");
}

/**
 * What the districts hold beside their subscriptions: each district's contacts (two addresses), the idle subscriptions' signing secrets (one in ten with an older one whose overlap ended a month ago)
 * and a notice each sent a week ago. The busy subscriptions' district has five secrets whose overlap ends within the
 * day (the notifier's secret warnings) and 30 notices due now.
 */
async function seedDistricts(db: pg.Pool): Promise<void> {
  await db.query(
    `INSERT INTO tenant_contacts (tenant, emails, updated_by) SELECT id, ARRAY['it@' || id || '.example.test', 'ops@' || id || '.example.test'], 'bench' FROM tenants`,
  );
  await db.query(
    `INSERT INTO subscription_secrets (id, subscription_id, secret, created_at, expires_at)
     SELECT 'sec_' || id, id, 'sealed', now() - interval '30 days', NULL FROM subscriptions WHERE id LIKE 'sub_idle_%'
     UNION ALL
     SELECT 'sec_old_' || id, id, 'sealed', now() - interval '90 days', now() - interval '30 days' FROM subscriptions WHERE id LIKE 'sub_idle_%' AND substr(id, 10)::int % 10 = 0
     UNION ALL
     SELECT 'sec_ending_' || i, ($1::text[])[1 + i % 3], 'sealed', now() - interval '6 days', now() + interval '12 hours' FROM generate_series(1, 5) i`,
    [BUSY],
  );
  await db.query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, created_at, sent_at)
     SELECT 'ntf_old_' || s.id, s.tenant, s.id, 'paused', 'email', 'it@' || s.tenant || '.example.test', 'Paused', 'Paused.', 'evt_old_' || s.id, 'sent', 1,
            now() - interval '7 days', now() - interval '7 days'
       FROM subscriptions s WHERE s.id LIKE 'sub_idle_%'`,
  );
  await db.query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, next_attempt_at)
     SELECT 'ntf_due_' || i, 'tnt_busy', ($1::text[])[1 + i % 3], 'paused', 'email', 'it@tnt_busy.example.test', 'Paused', 'Paused.', 'evt_due_ntf_' || i, 'pending',
            now() - interval '1 minute'
       FROM generate_series(1, 30) i`,
    [BUSY],
  );
}

/**
 * Two days of the DLQ sampler's readings (the groups' retention), one a minute (it takes one every 15 s), ending a
 * minute ago: each holds a group for one idle subscription in 50 (other districts with dead letters, 1,000 at
 * 50,000) and for the busy subscriptions' two reasons, so a district's 24 h chart (dlq_history_district) is drawn
 * among other districts' dead letters, and beside its own older readings, as on a platform. Only the readings are
 * seeded, not those dead letters, so every other loop's due work is the same.
 */
async function seedDlqHistory(db: pg.Pool): Promise<void> {
  await db.query(`INSERT INTO dlq_samples (sampled_at, depth, oldest_at) SELECT now() - make_interval(mins => m), 0, NULL FROM generate_series(1, 2880) m`);
  await db.query(
    `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, error_class, status_code, depth, oldest_at)
     SELECT s.sampled_at, sub.id, 'exhausted', 'http_5xx', 503, 40, s.sampled_at - interval '2 days'
       FROM dlq_samples s, subscriptions sub WHERE sub.id LIKE 'sub_idle_%' AND substr(sub.id, 10)::int % 50 = 0
     UNION ALL
     SELECT s.sampled_at, b, r, NULL, NULL, 100, s.sampled_at - interval '6 hours'
       FROM dlq_samples s, unnest($1::text[]) b, unnest(ARRAY['exhausted', 'permanent']) r`,
    [BUSY],
  );
  await db.query(
    `UPDATE dlq_samples s SET depth = g.depth, oldest_at = g.oldest_at
       FROM (SELECT sampled_at, sum(depth)::int AS depth, min(oldest_at) AS oldest_at FROM dlq_sample_groups GROUP BY sampled_at) g
      WHERE g.sampled_at = s.sampled_at`,
  );
}

/** 300 attempts of the busy subscriptions, new to the rollup. */
async function freshAttempts(db: pg.Pool): Promise<void> {
  await db.query(
    `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code)
     SELECT 'dlv_bench_' || g, ($1::text[])[1 + g % 3], 1, 'scheduled', now() - interval '30 seconds', 30 + g % 200,
            CASE WHEN g % 10 = 0 THEN 'retry' ELSE 'delivered' END, CASE WHEN g % 10 = 0 THEN 503 ELSE 200 END
       FROM generate_series(1, 300) g`,
    [BUSY],
  );
}

type Loop = {
  name: string;
  /** Work done before each run and not timed. */
  before?: (db: pg.Pool) => Promise<void>;
  /** One run; `db` is a pool (or a pool-like that hands out capturing clients, in the explain mode). */
  run: (db: pg.Pool) => Promise<unknown>;
  /** Runs in a transaction that is rolled back: it would otherwise use up the due work. */
  rollback?: boolean;
};

function loops(): Loop[] {
  const startedAt = new Date();
  return [
    // worker/reaper.ts: the expired leases back to due, in batches of 1,000.
    { name: "reaper", rollback: true, run: (db) => abandonLeases(db, { errorClass: "lease_expired", limit: 1000 }) },
    // worker/probe.ts: the due probes of subscriptions paused for failing.
    { name: "probe_claim", rollback: true, run: (db) => claimDueProbes(db, { limit: 10, leaseSeconds: 180 }) },
    // worker/redrive-pacer.ts: one tick (the running batches, one step of each); the batch is given one second of budget first.
    {
      name: "redrive_pacer",
      before: async (db) => void (await db.query("UPDATE redrive_batches SET paced_until = clock_timestamp() - interval '2 seconds' WHERE status = 'running'")),
      run: async (db) => {
        const pacer = startRedrivePacer({ pool: db, intervalMs: 3_600_000, log: quiet });
        try {
          return await pacer.tick();
        } finally {
          await pacer.stop();
        }
      },
    },
    // worker/heartbeat.ts: the beat and the freezes read after it.
    { name: "heartbeat", run: async (db) => (await heartbeat(db, { workerId: "w_bench", startedAt }, quiet), await loadFreezes(db)) },
    // worker/partition-maintenance.ts: the hourly run, every partition already made.
    { name: "partitions", run: (db) => ensurePartitions(db) },
    // lib/rollups/sampler.ts: one DLQ sample, and the rollup of 300 new attempts.
    { name: "sampler_dlq", run: (db) => sampleDlq(db, { minGapMs: 0, now: new Date() }) },
    { name: "sampler_rollup", before: freshAttempts, run: (db) => rollupAttemptStats(db, { settleSeconds: 0 }) },
    // GET /metrics: the ledger gauges read and the registry rendered.
    { name: "metrics_scrape", run: (db) => renderDashboardMetrics(db) },
    // The dashboard's alerts page.
    { name: "alerts_page", run: (db) => findAlertConditions(db) },
    // worker/notifier.ts, every 5 s: the check for a recent DLQ sample, then a round of notices (lib/notify/ingest.ts:
    // new operational events, secrets whose overlap ends within the day, dead letters waiting a day), when nothing new
    // happened since the last round (the first, warming run made the secret warnings).
    {
      name: "notifier_round",
      run: async (db) => (await sampleDlq(db, { minGapMs: NOTIFIER_DLQ_SAMPLE_MINUTES * 60_000 }), await ingestRound(db)),
    },
    // worker/notifier.ts, every 5 s: the claim of the due notices (20 at most).
    { name: "notifier_claim", rollback: true, run: (db) => claimDueNotifications(db, { limit: 20, leaseSeconds: 120 }) },
    // The DLQ page's depth and age charts (GET /api/v1/dlq/history?hours=24, every 5 s): an operator's, and a district's.
    { name: "dlq_history", run: (db) => findDlqHistory({ hours: 24 }, db) },
    { name: "dlq_history_district", run: (db) => findDlqHistory({ hours: 24, scope: { tenantId: "tnt_busy" } }, db) },
  ];
}

async function once(pool: pg.Pool, loop: Loop): Promise<number> {
  if (loop.before) await loop.before(pool);
  if (!loop.rollback) {
    const t = performance.now();
    await loop.run(pool);
    return performance.now() - t;
  }
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const t = performance.now();
    await loop.run(client as unknown as pg.Pool);
    const ms = performance.now() - t;
    await client.query("ROLLBACK");
    return ms;
  } finally {
    client.release();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Buffers (shared hit + read) of this database's top-level statements since the last reset. */
async function buffers(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ b: string | null }>(
    `SELECT sum(shared_blks_hit + shared_blks_read)::bigint AS b FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel AND query NOT LIKE '%pg_stat_statements%'`,
  );
  return Number(rows[0].b ?? 0);
}

export type LoopFigure = { msPerRun: number; buffersPerRun: number | null; metricsSeries?: number };

export async function runLoops(bp: BenchPg, opts: { sizes: number[]; runs: number }, log: (m: string) => void) {
  const bySize: Record<string, Record<string, LoopFigure>> = {};
  for (const size of opts.sizes) {
    const url = await bp.create(`loops_${size}`);
    const db = new pg.Pool({ connectionString: url, max: 4 });
    db.on("error", () => {});
    try {
      const t0 = Date.now();
      await seed(db, url, size);
      log(`loops: ${size.toLocaleString()} idle subscriptions seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const figures: Record<string, LoopFigure> = {};
      for (const loop of loops()) {
        await once(db, loop); // warm: plans and caches, as in a process that has run for a while
        if (bp.statStatements) await db.query("SELECT pg_stat_statements_reset()");
        const times: number[] = [];
        for (let i = 0; i < opts.runs; i++) times.push(await once(db, loop));
        const b = bp.statStatements ? await buffers(db) : null;
        figures[loop.name] = { msPerRun: round(median(times)), buffersPerRun: b === null ? null : Math.round(b / opts.runs) };
        if (loop.name === "metrics_scrape") {
          const { text } = await renderDashboardMetrics(db);
          figures[loop.name].metricsSeries = text.split("\n").filter((l) => l.startsWith("hookledger_")).length;
        }
      }
      bySize[String(size)] = figures;
      log(`loops at ${size}: ${JSON.stringify(figures)}`);
    } finally {
      await db.end().catch(() => {});
      await bp.drop(url);
    }
  }
  const lo = String(opts.sizes[0]);
  const hi = String(opts.sizes[opts.sizes.length - 1]);
  const ratio: Record<string, { time: number; buffers: number | null }> = {};
  for (const name of Object.keys(bySize[hi] ?? {})) {
    const a = bySize[lo][name];
    const b = bySize[hi][name];
    ratio[name] = {
      time: round(b.msPerRun / Math.max(a.msPerRun, 0.01)),
      buffers: a.buffersPerRun && b.buffersPerRun !== null ? round(b.buffersPerRun / a.buffersPerRun) : null,
    };
  }
  return { sizes: opts.sizes, runs: opts.runs, bySize, [`ratio_${hi}_${lo}`]: ratio };
}

/**
 * A pool-like on one client inside a transaction the caller rolls back: every
 * statement is recorded (text and values) as it runs, and the loop's own
 * transaction control is passed over, so a loop that commits leaves nothing
 * behind and its statements can be explained on the same rows.
 */
function capturing(client: pg.PoolClient, seen: { text: string; values: unknown[] }[]): pg.Pool {
  const query = (q: unknown, v?: unknown[]) => {
    const text = typeof q === "string" ? q : String((q as { text: string }).text);
    const values = typeof q === "string" ? (v ?? []) : ((q as { values?: unknown[] }).values ?? []);
    if (/^\s*(BEGIN|COMMIT|ROLLBACK)\s*$/i.test(text)) return Promise.resolve({ rows: [], rowCount: 0 });
    seen.push({ text, values });
    return client.query(text, values);
  };
  const self = { query, connect: async () => self, release: () => {}, on: () => self, off: () => self, end: async () => {} };
  return self as unknown as pg.Pool;
}

/** EXPLAIN (ANALYZE, BUFFERS) of every statement each loop runs, at one size: the plan's time and buffers, or the whole plan. */
async function explainAll(size: number, fullPlans: boolean) {
  const { openBenchPg } = await import("./lib/pg");
  const bp = await openBenchPg({});
  try {
    const url = await bp.create(`loops_explain_${size}`);
    const db = new pg.Pool({ connectionString: url, max: 4 });
    db.on("error", () => {});
    await seed(db, url, size);
    for (const loop of loops()) {
      const seen: { text: string; values: unknown[] }[] = [];
      if (loop.before) await loop.before(db);
      const c0 = await db.connect();
      try {
        await c0.query("BEGIN");
        await loop.run(capturing(c0, seen));
      } finally {
        await c0.query("ROLLBACK").catch(() => {});
        c0.release();
      }
      console.log(`\n== ${loop.name} at ${size.toLocaleString()} idle subscriptions`);
      for (const q of seen) {
        if (/^\s*(SET |SAVEPOINT|RELEASE)/i.test(q.text)) continue;
        const c = await db.connect();
        try {
          await c.query("BEGIN");
          const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${q.text}`, q.values);
          await c.query("ROLLBACK");
          const lines = rows.map((r) => r["QUERY PLAN"] as string);
          const buf = lines.find((l) => /Buffers:/.test(l))?.trim() ?? "";
          const exec = lines.find((l) => /Execution Time/.test(l))?.trim() ?? "";
          console.log(`-- ${q.text.replace(/\s+/g, " ").slice(0, 160)}\n   ${exec}; top ${buf}`);
          if (fullPlans) console.log(lines.map((l) => `   ${l}`).join("\n"));
        } catch (err) {
          await c.query("ROLLBACK").catch(() => {});
          console.log(`-- ${q.text.replace(/\s+/g, " ").slice(0, 160)}\n   (not explained: ${(err as Error).message})`);
        } finally {
          c.release();
        }
      }
    }
    await db.end();
  } finally {
    await bp.close();
  }
}

if (process.argv[1]?.endsWith("bench/loops.ts")) {
  const i = process.argv.indexOf("--subs");
  await explainAll(i > 0 ? Number(process.argv[i + 1]) : 50_000, process.argv.includes("--full-plans"));
  process.exit(0);
}
