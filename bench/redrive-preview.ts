// What the bulk redrive's "latest state wins" preview costs (lib/ledger/sql/redrive.ts
// countRedriveMatches with latestStateWins, POST /api/v1/redrives dryRun) on a
// large ledger: a fresh ledger of --events events over six months (one
// delivery each, in six month partitions), each with a realistic subject
// (tenant + studentId + assignmentId, about --events / --subjects events a
// subject, 10% of them another type), delivered to its district's subscription
// (four), --dead of them dead letters and the rest delivered, so a dead letter
// whose subject has a newer delivered event is superseded. Then the preview
// statement's EXPLAIN (ANALYZE, BUFFERS) (captured from the real call) and the
// wall time of the preview ("now": one pass over the whole set) over every
// subscription and over one, alternated call by call with the per-item
// statement written out here ("old": one EXISTS per dead letter, the pacer's
// definition), after checking both give the same counts: the reference any
// form of the preview is checked and measured against.
//   node bin/run-ts.mjs bench/redrive-preview.ts [--events 550000] [--dead 50000] [--subjects 250000] [--calls 5] [--full-plans]
import { randomBytes } from "node:crypto";
import pg from "pg";
import { numberArg } from "./lib/args";

process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
const { openBenchPg } = await import("./lib/pg");
const { summary } = await import("./lib/stats");
const { countRedriveMatches } = await import("../lib/ledger/sql/redrive");

const EVENTS = numberArg("--events", 550_000);
const DEAD = numberArg("--dead", 50_000);
const SUBJECTS = numberArg("--subjects", 250_000);
const CALLS = numberArg("--calls", 5);
const fullPlans = process.argv.includes("--full-plans");
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

// The preview's count with the per-item EXISTS for each dead letter (lib/ledger/sql/redrive.ts SUPERSEDED), written out.
const oldPreview = (subscriptionId: string | null) =>
  [
    `SELECT count(*)::int AS matched, min(d.dead_lettered_at) AS oldest, max(d.dead_lettered_at) AS newest,
            (count(*) FILTER (WHERE EXISTS (
               SELECT 1 FROM events e2 JOIN deliveries d2 ON d2.event_id = e2.id
                WHERE e.subject <> '{}'::jsonb
                  AND e2.subject_values @> e.subject_values AND e2.subject = e.subject
                  AND e2.type = e.type AND e2.occurred_at > e.occurred_at
                  AND d2.subscription_id = d.subscription_id AND d2.state = 'delivered')))::int AS superseded
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
       JOIN events e ON e.id = d.event_id AND e.created_at = d.event_at
      WHERE d.state = 'dead_letter' AND ($1::text IS NULL OR d.subscription_id = $1) AND s.state = 'active'`,
    [subscriptionId],
  ] as const;

const benchPg = await openBenchPg({});
try {
  const url = await benchPg.create("lsw");
  const db = new pg.Pool({ connectionString: url, max: 4 });
  db.on("error", () => {});
  const t0 = Date.now();
  await db.query("SELECT setseed(0.42)");
  await db.query(`SELECT hl_ensure_partition(t, now() - make_interval(months => m)) FROM unnest(ARRAY['events','deliveries','attempts']) t, generate_series(0, 6) m`);
  await db.query(`INSERT INTO tenants (id, name) SELECT 't' || i, 'District ' || i FROM generate_series(1, 4) i`);
  await db.query(`INSERT INTO subscriptions (id, name, tenant, url, event_types)
                  SELECT 'sub_' || i, 'Gradebook ' || i, 't' || i, 'https://x.example.test/h', '{assignment.graded,assignment.submitted}' FROM generate_series(1, 4) i`);
  for (let from = 1; from <= EVENTS; from += 200_000) {
    const to = Math.min(EVENTS, from + 199_999);
    // Event g at a time spread evenly over the last 180 days, of subject k = g mod SUBJECTS (so a subject's events are
    // SUBJECTS apart): district 1 + k mod 4, student k / 50, assignment k mod 50; subject_values as the ingest makes them.
    await db.query(
      `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
       SELECT 'evt_' || g, CASE WHEN random() < 0.1 THEN 'assignment.submitted' ELSE 'assignment.graded' END, '\\x7b7d'::bytea, t, x.tenant,
              jsonb_build_object('tenant', x.tenant, 'studentId', x.stu, 'assignmentId', x.asg),
              ARRAY[x.tenant, 'tenant:' || x.tenant, x.stu, 'studentId:' || x.stu, x.asg, 'assignmentId:' || x.asg], t
         FROM generate_series($1::int, $2::int) g,
              LATERAL (SELECT now() - make_interval(secs => ($3::int - g) * (180 * 86400.0 / $3::int)) AS t, g % $4::int AS k) w,
              LATERAL (SELECT 't' || (1 + w.k % 4) AS tenant, 'stu_' || (w.k / 50) AS stu, 'asg_' || (w.k % 50) AS asg) x`,
      [from, to, EVENTS, SUBJECTS],
    );
    await db.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                               dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, delivered_at, event_at, created_at)
       SELECT hl_delivery_key(x.sub, e.id), e.id, x.sub, e.type, s.st, 1, 1,
              CASE WHEN s.st = 'dead_letter' THEN 'exhausted' END, CASE WHEN s.st = 'dead_letter' THEN e.created_at + interval '1 minute' END,
              CASE WHEN s.st = 'dead_letter' THEN 'http_5xx' END, CASE WHEN s.st = 'dead_letter' THEN 503 END,
              CASE WHEN s.st = 'delivered' THEN e.created_at + interval '1 second' END, e.created_at, e.created_at
         FROM (SELECT g, random() AS r FROM generate_series($3::int, $4::int) g) r JOIN events e ON e.id = 'evt_' || r.g
        CROSS JOIN LATERAL (SELECT CASE WHEN r.r < $2::float8 / $1::int THEN 'dead_letter' ELSE 'delivered' END AS st) s
        CROSS JOIN LATERAL (SELECT 'sub_' || substr(e.tenant, 2) AS sub) x`,
      [EVENTS, DEAD, from, to],
    );
  }
  await db.query("VACUUM ANALYZE");
  const size = (await db.query("SELECT pg_size_pretty(pg_database_size(current_database())) AS s")).rows[0].s;
  const counts = (
    await db.query(`SELECT count(*) FILTER (WHERE state = 'dead_letter')::int AS dead, count(*) FILTER (WHERE state = 'delivered')::int AS delivered FROM deliveries`)
  ).rows[0];
  if (counts.dead === 0) throw new Error("the seed made no dead letters");
  log(
    `seeded ${EVENTS.toLocaleString()} events, ${counts.dead.toLocaleString()} dead letters, ${counts.delivered.toLocaleString()} delivered in ${Math.round((Date.now() - t0) / 1000)} s (${size})`,
  );

  const cases = [
    ["every subscription", null],
    ["sub_1", "sub_1"],
  ] as const;
  for (const [name, sub] of cases) {
    const filter = sub ? { subscriptionId: sub } : {};
    const now = await countRedriveMatches(db, filter, { latestStateWins: true });
    const [text, values] = oldPreview(sub);
    const old = (await db.query(text, [...values])).rows[0];
    log(`${name}: matched ${now.matched}, superseded ${now.superseded} (old statement: ${old.matched}, ${old.superseded})`);
    if (now.matched !== old.matched || now.superseded !== old.superseded) throw new Error(`${name}: the preview's counts differ from the old statement's`);

    // The statement of the real call, and the old one, explained.
    const seen: { text: string; values: unknown[] }[] = [];
    const recorder = { query: (t: string, v: unknown[]) => (seen.push({ text: t, values: v }), db.query(t, v)) } as unknown as pg.Pool;
    await countRedriveMatches(recorder, filter, { latestStateWins: true });
    const explained: [string, { text: string; values: unknown[] }][] = [
      ["now", seen[0]],
      ["old", { text, values: [...values] }],
    ];
    for (const [label, q] of explained) {
      const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${q.text}`, q.values);
      const plan = rows.map((r) => r["QUERY PLAN"] as string);
      const time = (p: string) => plan.find((l) => l.startsWith(p))?.replace(/.*: /, "");
      const buffers = plan.find((l) => l.trim().startsWith("Buffers:"))?.trim() ?? "";
      log(`  ${label}: plan ${time("Planning Time")}, run ${time("Execution Time")} | ${buffers}`);
      if (fullPlans || label === "now") console.log(plan.join("\n"));
    }

    // Wall time, the two statements alternated call by call.
    const t = { now: [] as number[], old: [] as number[] };
    for (let i = 0; i < CALLS; i++) {
      let s = performance.now();
      await countRedriveMatches(db, filter, { latestStateWins: true });
      t.now.push(performance.now() - s);
      s = performance.now();
      await db.query(text, [...values]);
      t.old.push(performance.now() - s);
    }
    for (const [k, v] of Object.entries(t)) log(`  ${k.padEnd(4)} ${JSON.stringify(summary(v))} ms`);
  }
  await db.end();
} finally {
  await benchPg.close();
}
process.exit(0);
