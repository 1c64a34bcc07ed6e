// deploy/prometheus/alerts.yml is valid (promtool check rules), behaves as
// intended on sample series (promtool test rules alerts.test.yml), and uses
// the same thresholds as the dashboard's alerts page (lib/metrics/thresholds.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ALERT_THRESHOLDS } from "../../lib/metrics/thresholds";
import { OFFENDERS_SHOWN, findAlertConditions } from "../../lib/metrics/alerts";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { AlertList } from "../../components/alerts/AlertList";
import { textLink } from "../../components/ui/kit";

const DIR = path.resolve("deploy/prometheus");

function promtool(): string {
  const candidates = [process.env.PROMTOOL, "promtool", "/usr/bin/promtool", "/usr/local/bin/promtool"].filter(Boolean) as string[];
  for (const c of candidates) {
    const r = spawnSync(c, ["--version"], { encoding: "utf8" });
    if (r.status === 0) return c;
  }
  throw new Error(
    "promtool is not installed, so the alert rules cannot be checked. Install Debian's Prometheus package " +
      "(`apt-get install -y prometheus`, which ships /usr/bin/promtool; .ci/run does this) or set PROMTOOL to its path.",
  );
}

function run(args: string[]) {
  const r = spawnSync(promtool(), args, { cwd: DIR, encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** The `expr` and `for` of each alert, read from the rule file's regular layout. */
function rules(): Map<string, { expr: string; for: string }> {
  const text = fs.readFileSync(path.join(DIR, "alerts.yml"), "utf8");
  const out = new Map<string, { expr: string; for: string }>();
  for (const block of text.split(/\n\s*- alert: /).slice(1)) {
    const name = block.split("\n")[0].trim();
    const expr = block.match(/\n\s*expr: (?:\|\n)?([\s\S]*?)\n\s*for: (\S+)/);
    if (!expr) throw new Error(`alert ${name}: no expr/for`);
    out.set(name, { expr: expr[1].replace(/\s+/g, " ").trim(), for: expr[2] });
  }
  return out;
}

describe("Prometheus alert rules", () => {
  it("pass `promtool check rules`", () => {
    const r = run(["check", "rules", "alerts.yml"]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS: 6 rules found/);
  });

  it("pass `promtool test rules` on the sample series", () => {
    const r = run(["test", "rules", "alerts.test.yml"]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS/);
  });

  it("every required alert exists, with the thresholds the dashboard uses", () => {
    const t = ALERT_THRESHOLDS;
    const r = rules();
    expect([...r.keys()].sort()).toEqual([
      "HookledgerDlqGrowing",
      "HookledgerDlqOldestAge",
      "HookledgerLedgerScrapeFailing",
      "HookledgerNoWorkerHeartbeat",
      "HookledgerSchedulingLate",
      "HookledgerSubscriptionFailing",
    ]);
    expect(r.get("HookledgerDlqOldestAge")!.expr).toContain(`hookledger_dlq_oldest_age_seconds) > ${t.dlqOldestAgeSeconds}`);
    expect(r.get("HookledgerDlqGrowing")!.expr).toContain(`delta(hookledger_dlq_depth[${t.dlqGrowthWindowMinutes}m])) >= ${t.dlqGrowth}`);
    const failing = r.get("HookledgerSubscriptionFailing")!;
    expect(failing.expr).toContain(`) > ${t.subscriptionFailureRatio} and`);
    expect(failing.expr).toContain(`increase(hookledger_attempts_total[${t.subscriptionFailingWindowMinutes}m])) >= ${t.subscriptionFailingMinAttempts}`);
    expect(failing.for).toBe(`${t.subscriptionFailingWindowMinutes}m`);
    expect(r.get("HookledgerNoWorkerHeartbeat")!.expr).toBe(`min(hookledger_worker_newest_heartbeat_age_seconds) > ${t.heartbeatMaxAgeSeconds}`);
    const late = r.get("HookledgerSchedulingLate")!.expr;
    expect(late).toContain(`histogram_quantile(0.99, sum by (le) (rate(hookledger_scheduling_lateness_seconds_bucket[5m]))) > ${t.schedulingLatenessSeconds}`);
    expect(late).toContain(`max(hookledger_oldest_due_age_seconds) > ${t.schedulingLatenessSeconds}`);
  });

  it("name only series that hookledger exports", async () => {
    const { dashboardMetrics } = await import("../../lib/metrics/dashboard");
    const worker = await import("../../lib/metrics/worker");
    const exported = new Set<string>();
    for (const m of await dashboardMetrics().registry.getMetricsAsJSON()) exported.add(m.name);
    for (const m of await worker.workerRegistry.getMetricsAsJSON()) exported.add(m.name);
    const used = new Set<string>();
    for (const { expr } of rules().values()) for (const m of expr.matchAll(/\b(hookledger_[a-z_]+?)(?:_bucket)?\b[[{)]/g)) used.add(m[1]);
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) expect(exported, name).toContain(name);
  });
});

describe("the dashboard's alerts page conditions (same thresholds, from the database)", () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const id of ["sub_old", "sub_burst", "sub_failing", "sub_ok"])
      await db.pool.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ($1, $2, 'https://x.example.test/h', '{assignment.graded}')", [id, `${id} SIS`]);
    await db.pool.query("INSERT INTO worker_heartbeats (worker_id, hostname, pid, beat_at) VALUES ('w1', 'h', 1, now())");
  });
  afterAll(async () => db?.close());

  async function deliveries(sub: string, n: number, sql: string, ageSeconds: number) {
    await db.pool.query(
      `WITH e AS (INSERT INTO events (id, type, payload, occurred_at)
                  SELECT $1 || '_' || i || '_' || $4, 'assignment.graded', '\\x7b7d'::bytea, now() FROM generate_series(1, $2::int) i RETURNING id, created_at)
       INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at, next_attempt_at, event_at)
       SELECT md5($1 || e.id), e.id, $1, 'assignment.graded', ${sql}, now() - make_interval(secs => $3), e.created_at
       FROM e`,
      [sub, n, ageSeconds, Math.random().toString(36).slice(2)],
    );
  }
  const holding = async () => {
    const { conditions } = await findAlertConditions(db.pool);
    return Object.fromEntries(conditions.map((c) => [c.id, c.holds ? c.offenders.map((o) => o.subscriptionId) : false]));
  };

  it("nothing holds on a healthy ledger", async () => {
    await deliveries("sub_ok", 3, "'dead_letter', 'permanent', now() - interval '5 minutes'", 0);
    expect(await holding()).toEqual({ dlq_oldest_age: false, dlq_growing: false, subscription_failing: false, no_worker_heartbeat: false, scheduling_late: false });
  });

  it("each condition holds exactly for the subscriptions over its threshold", async () => {
    const t = ALERT_THRESHOLDS;
    // sub_old: one dead letter just over the age threshold, one just under.
    await deliveries("sub_old", 1, `'dead_letter', 'exhausted', now() - make_interval(secs => ${t.dlqOldestAgeSeconds + 120})`, 0);
    await deliveries("sub_ok", 1, `'dead_letter', 'exhausted', now() - make_interval(secs => ${t.dlqOldestAgeSeconds - 120})`, 0);
    // sub_burst: the growth threshold's worth of new dead letters; sub_ok has only 3 recent ones.
    await deliveries("sub_burst", t.dlqGrowth, "'dead_letter', NULL, now() - interval '2 minutes'", 0);
    // sub_failing: 80 % failing in every minute of the window; sub_ok: 20 %.
    await db.pool.query(
      `INSERT INTO attempt_stats_minute (subscription_id, bucket, attempts, delivered, retried)
       SELECT s, date_trunc('minute', now()) - make_interval(mins => m), 10, CASE s WHEN 'sub_failing' THEN 2 ELSE 8 END, CASE s WHEN 'sub_failing' THEN 8 ELSE 2 END
       FROM unnest(ARRAY['sub_failing', 'sub_ok']) s, generate_series(0, 14) m`,
    );
    // A delivery of an active subscription due 2 minutes ago and not claimed.
    await deliveries("sub_ok", 1, "'pending', NULL, NULL", t.schedulingLatenessSeconds + 60);
    // The only worker's last beat is older than the threshold.
    await db.pool.query("UPDATE worker_heartbeats SET beat_at = now() - make_interval(secs => $1)", [t.heartbeatMaxAgeSeconds + 5]);
    expect(await holding()).toEqual({
      dlq_oldest_age: ["sub_old"],
      dlq_growing: ["sub_burst"],
      subscription_failing: ["sub_failing"],
      no_worker_heartbeat: [null],
      scheduling_late: [null],
    });
  });

  it("failures at both ends of the window with no attempts between are not failing for 15 minutes", async () => {
    await db.pool.query(
      "DELETE FROM attempt_stats_minute WHERE subscription_id = 'sub_failing' AND bucket BETWEEN now() - interval '10 minutes' AND now() - interval '5 minutes'",
    );
    expect((await holding()).subscription_failing).toBe(false);
    await db.pool.query(
      "INSERT INTO attempt_stats_minute (subscription_id, bucket, attempts, delivered, retried) VALUES ('sub_failing', date_trunc('minute', now()) - interval '7 minutes', 10, 0, 10)",
    );
    expect((await holding()).subscription_failing).toEqual(["sub_failing"]);
  });

  it("a subscription failing only lately (not for the whole window) is not yet failing", async () => {
    await db.pool.query("UPDATE attempt_stats_minute SET delivered = 10, retried = 0 WHERE subscription_id = 'sub_failing' AND bucket < now() - interval '8 minutes'");
    expect((await holding()).subscription_failing).toBe(false);
  });

  it("with thousands of subscriptions over a threshold, lists the worst and counts them all", async () => {
    const t = ALERT_THRESHOLDS;
    // An outage that touched every district: 3,000 endpoints with an old dead letter each (the last the oldest), all failing.
    await db.pool.query(
      `INSERT INTO subscriptions (id, name, url, event_types)
       SELECT 'sub_bulk_' || lpad(g::text, 4, '0'), 'Bulk District ' || g || ' SIS', 'https://x.example.test/h', '{assignment.graded}' FROM generate_series(1, 3000) g`,
    );
    await db.pool.query(
      `WITH e AS (INSERT INTO events (id, type, payload, occurred_at)
                  SELECT 'evt_bulk_' || g, 'assignment.graded', '\\x7b7d'::bytea, now() FROM generate_series(1, 3000) g RETURNING id, created_at)
       INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at, event_at)
       SELECT md5(e.id), e.id, 'sub_bulk_' || lpad(substr(e.id, 10), 4, '0'), 'assignment.graded', 'dead_letter', 'exhausted',
              now() - make_interval(secs => $1 + substr(e.id, 10)::int), e.created_at
         FROM e`,
      [t.dlqOldestAgeSeconds + 120],
    );
    await db.pool.query(
      `INSERT INTO attempt_stats_minute (subscription_id, bucket, attempts, delivered, retried)
       SELECT 'sub_bulk_' || lpad(g::text, 4, '0'), date_trunc('minute', now()) - make_interval(mins => m), 10, 1, 9
         FROM generate_series(1, 3000) g, generate_series(0, 14) m`,
    );
    const { conditions } = await findAlertConditions(db.pool);
    const oldest = conditions.find((c) => c.id === "dlq_oldest_age")!;
    expect(oldest.offenderCount).toBe(3001); // sub_old's too
    expect(oldest.offenders).toHaveLength(OFFENDERS_SHOWN);
    expect(oldest.offenders[0]).toMatchObject({ subscriptionId: "sub_bulk_3000", subscriptionName: "Bulk District 3000 SIS" });
    const failing = conditions.find((c) => c.id === "subscription_failing")!;
    expect(failing.offenderCount).toBe(3000);
    expect(failing.offenders).toHaveLength(OFFENDERS_SHOWN);
    expect(failing.offenders.every((o) => o.subscriptionName?.startsWith("Bulk District"))).toBe(true);
    // The page names the listed ones, says how many there are, and where the others are found.
    const html = renderToString(createElement(AlertList, { conditions })).replaceAll("<!-- -->", "");
    const listed = conditions.reduce((n, c) => n + c.offenders.filter((o) => o.subscriptionId).length, 0);
    expect(listed).toBeLessThan(3 * OFFENDERS_SHOWN);
    expect(html.match(/href="\/subscriptions\//g)).toHaveLength(listed);
    expect(html).toContain(`Showing the worst ${OFFENDERS_SHOWN} of 3,001 subscriptions; find the others on <a class="${textLink}" href="/dlq">Dead letters</a>.`);
    expect(html).toContain(`Showing the worst ${OFFENDERS_SHOWN} of 3,000 subscriptions.`);
    expect(html.length).toBeLessThan(100_000);
  });
});
