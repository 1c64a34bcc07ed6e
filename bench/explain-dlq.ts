// What counting the DLQ now costs (lib/dashboard/dead-letters.ts getDlqSummary) on a
// large ledger, against what the sampler-read answer cost: a fresh ledger of
// 200 subscriptions in 100 tenants, --events events over six months (one
// delivery each, in six month partitions), --dead of them dead letters (40% on
// one subscription, the rest spread, four reasons). Then, at that DLQ size and
// after resolving it down to a tenth and a hundredth: EXPLAIN (ANALYZE,
// BUFFERS) of each statement getDlqSummary runs (captured from the real call),
// and the wall time of getDlqSummary as a global viewer and as one district's,
// alternated call by call with the sample read it replaces (the latest
// sample's groups) and with the whole DLQ's groups read from the rows (the old
// answer without a fresh sample).
//   node bin/run-ts.mjs bench/explain-dlq.ts [--events 1800000] [--dead 300000] [--calls 30] [--full-plans]
import { randomBytes } from "node:crypto";
import pg from "pg";
import { numberArg } from "./lib/args";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
const { openBenchPg } = await import("./lib/pg");
const { summary } = await import("./lib/stats");
const { getDlqSummary } = await import("../lib/dashboard/dead-letters");
const { findDlqGroupsLive, findDlqSampleGroups, findLatestDlqSampleAt } = await import("../lib/ledger/sql/dead-letters");
const { sampleDlq } = await import("../lib/rollups/sampler");

const EVENTS = numberArg("--events", 1_800_000);
const DEAD = numberArg("--dead", 300_000);
const CALLS = numberArg("--calls", 30);
const fullPlans = process.argv.includes("--full-plans");
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

const benchPg = await openBenchPg({});
try {
  const url = await benchPg.create("dlq");
  const db = new pg.Pool({ connectionString: url, max: 4 });
  db.on("error", () => {});
  const t0 = Date.now();
  await db.query("SELECT setseed(0.35)");
  await db.query(`SELECT hl_ensure_partition(t, now() - make_interval(months => m)) FROM unnest(ARRAY['events','deliveries','attempts']) t, generate_series(1, 6) m`);
  await db.query(`INSERT INTO tenants (id, name) SELECT 't' || lpad(i::text, 3, '0'), 'District ' || i FROM generate_series(1, 100) i`);
  await db.query(`INSERT INTO subscriptions (id, name, tenant, url, event_types)
                  SELECT 'sub_' || lpad(i::text, 3, '0'), 'Sub ' || i, 't' || lpad(((i + 1) / 2)::text, 3, '0'), 'https://x.example.test/h', '{assignment.graded}'
                    FROM generate_series(1, 200) i`);
  for (let from = 1; from <= EVENTS; from += 200_000) {
    const to = Math.min(EVENTS, from + 199_999);
    // Event g at a time spread evenly over the last 180 days; its delivery dead-lettered with probability DEAD / EVENTS.
    await db.query(
      `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values, created_at)
       SELECT 'evt_' || g, 'assignment.graded', convert_to('{"id":"evt_' || g || '","data":{"studentId":"stu_' || g || '"}}', 'UTF8'),
              t, jsonb_build_object('studentId', 'stu_' || g), ARRAY['stu_' || g], t
         FROM generate_series($1::int, $2::int) g, LATERAL (SELECT now() - make_interval(secs => ($3::int - g) * (180 * 86400.0 / $3::int)) AS t) x`,
      [from, to, EVENTS],
    );
    await db.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                               dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, delivered_at, event_at, created_at)
       SELECT hl_delivery_key(x.sub, k.id), k.id, x.sub, 'assignment.graded', s.st, 1, 1,
              CASE WHEN s.st = 'dead_letter' THEN x.reason END, CASE WHEN s.st = 'dead_letter' THEN k.created_at + interval '1 minute' END,
              CASE WHEN s.st = 'dead_letter' THEN x.ec END, CASE WHEN s.st = 'dead_letter' THEN x.sc END,
              CASE WHEN s.st = 'delivered' THEN k.created_at + interval '1 second' END, k.created_at, k.created_at
         FROM (SELECT g, random() AS r1, random() AS r2, random() AS r3 FROM generate_series($1::int, $2::int) g) r
         JOIN event_keys k ON k.id = 'evt_' || r.g
        CROSS JOIN LATERAL (SELECT CASE WHEN r.r1 < $4::float8 / $3::int THEN 'dead_letter' ELSE 'delivered' END AS st) s
        CROSS JOIN LATERAL (SELECT CASE WHEN s.st = 'dead_letter' AND r.r2 < 0.4 THEN 'sub_007' ELSE 'sub_' || lpad((1 + floor(r.r2 * 1000)::int % 200)::text, 3, '0') END AS sub,
                                   (ARRAY['exhausted','exhausted','permanent','permanent','gone','abandoned'])[1 + floor(r.r3 * 6)::int] AS reason,
                                   (ARRAY['http_5xx','timeout','http_4xx','http_4xx','http_4xx','timeout'])[1 + floor(r.r3 * 6)::int] AS ec,
                                   (ARRAY[503,NULL,422,400,410,NULL])[1 + floor(r.r3 * 6)::int] AS sc) x`,
      [from, to, EVENTS, DEAD],
    );
  }
  await db.query("VACUUM ANALYZE");
  const size = (await db.query("SELECT pg_size_pretty(pg_database_size(current_database())) AS s")).rows[0].s;
  log(`seeded ${EVENTS.toLocaleString()} deliveries in ${Math.round((Date.now() - t0) / 1000)} s (${size})`);

  const scoped = { tenantId: "t050" };
  for (const keep of [1, 0.1, 0.01]) {
    if (keep < 1) {
      // Resolve all but `keep` of the original DLQ, at random, as an operator's bulk resolves would.
      const dead = (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE state = 'dead_letter'")).rows[0].n;
      await db.query(
        `UPDATE deliveries SET state = 'resolved', resolution = 'discarded', resolved_at = now(), resolved_by = 'bench', resolution_reason = 'bench'
          WHERE state = 'dead_letter' AND random() >= $1::float8`,
        [(keep * DEAD) / dead],
      );
      await db.query("VACUUM ANALYZE deliveries");
    }
    await sampleDlq(db, { minGapMs: 0 });
    const counts = (
      await db.query(`SELECT count(*)::int AS dead, count(DISTINCT (subscription_id, dead_letter_reason))::int AS pairs FROM deliveries WHERE state = 'dead_letter'`)
    ).rows[0];
    log(`--- ${counts.dead.toLocaleString()} dead letters in ${counts.pairs} (subscription, reason) pairs ---`);

    // The statements of one global and one scoped call, recorded from the real function.
    for (const [who, scope] of [
      ["global viewer", undefined],
      ["district t050", scoped],
    ] as const) {
      const seen: { text: string; values: unknown[] }[] = [];
      const recorder = {
        query: (text: string, values: unknown[]) => (seen.push({ text, values }), db.query(text, values)),
      } as unknown as pg.Pool;
      const s = await getDlqSummary({ scope }, recorder);
      log(`${who}: depth ${s.depth}, ${s.bySubscriptionAndReason.length} pairs, ${s.groups.length} groups (${s.groups.filter((g) => g.sampledAt).length} sampled)`);
      for (const q of seen) {
        const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${q.text}`, q.values);
        const plan = rows.map((r) => r["QUERY PLAN"] as string);
        const head = q.text.replace(/\s+/g, " ").trim().slice(0, 60);
        const buffers = plan.find((l) => l.trim().startsWith("Buffers:"))?.trim() ?? "";
        // Index names without their month: deliveries_p2026_07_subscription_id_dead_letter_reason_dead_idx -> subscription_id_dead_letter_reason_dead_idx.
        const scans = new Map<string, number>();
        for (const l of plan) {
          const m = /(Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan)(?: using| on)? (\S+)/.exec(l);
          if (!m || /never executed/.test(l)) continue;
          const k = `${m[1]} ${m[2].replace(/^deliveries_(p\d{4}_\d{2}|default)_/, "deliveries_*_")}`;
          scans.set(k, (scans.get(k) ?? 0) + 1);
        }
        const time = (p: string) => plan.find((l) => l.startsWith(p))?.replace(/.*: /, "");
        log(`  plan ${time("Planning Time")}, run ${time("Execution Time")} | ${buffers} | ${head}`);
        log(`    ${[...scans].map(([k, n]) => `${k} ×${n}`).join("; ")}`);
        if (fullPlans) console.log(plan.join("\n"));
      }
    }

    // Wall time, the three reads alternated call by call so each sees the same minutes of the machine.
    const t = { now: [] as number[], nowScoped: [] as number[], sampleRead: [] as number[], allFromRows: [] as number[] };
    const time = async (into: number[], f: () => Promise<unknown>) => {
      const s = performance.now();
      await f();
      into.push(performance.now() - s);
    };
    for (let i = 0; i < CALLS; i++) {
      await time(t.now, () => getDlqSummary({}, db));
      await time(t.nowScoped, () => getDlqSummary({ scope: scoped }, db));
      await time(t.sampleRead, async () => findDlqSampleGroups(db, (await findLatestDlqSampleAt(db))!));
      if (i < Math.min(CALLS, 10)) await time(t.allFromRows, () => findDlqGroupsLive(db));
    }
    for (const [k, v] of Object.entries(t)) log(`  ${k.padEnd(12)} ${JSON.stringify(summary(v))} ms`);
  }
  await db.end();
} finally {
  await benchPg.close();
}
process.exit(0);
