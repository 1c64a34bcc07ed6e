// deploy/prometheus/alerts.yml is valid (promtool check rules), behaves as
// intended on sample series (promtool test rules alerts.test.yml), and uses
// the same thresholds as the dashboard's alerts page (lib/metrics/thresholds.ts).
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ALERT_THRESHOLDS } from "../lib/metrics/thresholds";

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
    const { dashboardMetrics } = await import("../lib/metrics/dashboard");
    const worker = await import("../lib/metrics/worker");
    const exported = new Set<string>();
    for (const m of (await dashboardMetrics().registry.getMetricsAsJSON())) exported.add(m.name);
    for (const m of (await worker.workerRegistry.getMetricsAsJSON())) exported.add(m.name);
    const used = new Set<string>();
    for (const { expr } of rules().values()) for (const m of expr.matchAll(/\b(hookledger_[a-z_]+?)(?:_bucket)?\b[[{)]/g)) used.add(m[1]);
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) expect(exported, name).toContain(name);
  });
});
