// The benchmark suite at tiny sizes, so that it cannot rot: it must complete
// and write well-formed results. Speed is never asserted here (speed
// is measured by `npm run bench`, never in timed tests).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";

const out = fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-bench-smoke-"));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

const isNum = (x: unknown) => typeof x === "number" && Number.isFinite(x);

describe("npm run bench -- --tiny", () => {
  it("runs every scenario and writes latest.json and latest.md", () => {
    const r = spawnSync(process.execPath, ["bin/run-ts.mjs", "bench/run.ts", "--tiny", "--out", out, "--no-next"], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { ...process.env, LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 280_000,
    });
    const report = JSON.parse(fs.readFileSync(path.join(out, "latest.json"), "utf8"));
    expect(report.errors, r.stderr.slice(-3000)).toEqual({});
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    expect(report.complete).toBe(true);
    expect(report.mode).toBe("tiny");
    expect(report.machine.cpus).toBeGreaterThan(0);
    expect(report.machine.postgres.version).toMatch(/^\d+/);

    const res = report.results;
    expect(isNum(res.ceiling.perSecond)).toBe(true);
    expect(isNum(res.commit_latency.synchronousCommitOnMs.p50)).toBe(true);
    expect(res.drain_1w.completed).toBe(true);
    expect(res.drain_1w.attemptRows).toBe(res.drain_1w.deliveries);
    expect(isNum(res.drain_1w.perSecond)).toBe(true);
    expect(res.drain_1w.peakRssMb.every(isNum)).toBe(true);
    expect(isNum(res.cron_sweep.perSecond)).toBe(true);
    expect(res.retry_timing.retriesAttempted).toBe(res.retry_timing.retries);
    expect(isNum(res.retry_timing.latenessMs.p99)).toBe(true);
    expect(isNum(res.fairness.keptPct)).toBe(true);
    expect(res.redrive_pacing.batch.redriven).toBe(res.redrive_pacing.deadLetters);
    expect(isNum(res.redrive_pacing.achievedRatePerSecond)).toBe(true);
    expect(res.ingest.routeHandlerInNodeHttp.statuses).toEqual({ "202": res.ingest.routeHandlerInNodeHttp.events });
    expect(res.ingest.routeHandlerInNodeHttp.fanOut).toBe(3);
    expect(res.dashboard.loaded.deliveries).toBeGreaterThan(0);
    // A peer's failed round is kept in its result (the other rounds still count), not in report.errors.
    for (const [name, system] of Object.entries<any>(res.peers.systems))
      for (const run of system.runs) expect(run.completed, `peers: ${name}, round ${run.round}: ${run.error ?? "incomplete"}`).toBe(true);
    for (const q of Object.values<{ p50: number; p95: number }>(res.dashboard.queries)) {
      expect(isNum(q.p50)).toBe(true);
      expect(isNum(q.p95)).toBe(true);
    }

    const md = fs.readFileSync(path.join(out, "latest.md"), "utf8");
    expect(md).toContain("| # | measurement |");
    expect(md).toContain("Machine:");
  }, 300_000);
});
