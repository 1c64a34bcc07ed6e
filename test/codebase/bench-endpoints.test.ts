// The bench's endpoints step (bench/scenarios/endpoints.ts) at tiny sizes, so
// that it cannot rot: it runs only when named, outside the smoke test's
// `--tiny` suite. Every drain must finish its backlog, published through the
// API, and be compared with the 20-endpoint drain. Speed is never asserted.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";

const out = fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-bench-endpoints-"));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe("npm run bench -- --tiny --only endpoints", () => {
  it("drains the same backlog beside idle subscriptions and spread over many, each against the 20-endpoint drain", () => {
    const r = spawnSync(process.execPath, ["bin/run-ts.mjs", "bench/run.ts", "--tiny", "--only", "endpoints", "--idle", "200", "--out", out], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { ...process.env, LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 280_000,
    });
    const report = JSON.parse(fs.readFileSync(path.join(out, "latest.json"), "utf8"));
    expect(report.errors, r.stderr.slice(-3000)).toEqual({});
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const e = report.results.endpoints;
    expect(Object.keys(e.variants)).toEqual(["base", "idle200", "spread"]);
    for (const [name, v] of Object.entries<any>(e.variants)) {
      for (const run of v.runs) {
        expect(run.completed, `${name}, round ${run.round}: ${run.error ?? "incomplete"}`).toBe(true);
        expect(run.ingest.events).toBe(e.deliveries);
      }
      if (name !== "base") expect(typeof v.ratioToBase).toBe("number");
    }
    // 400 deliveries at 8 an endpoint: 50 endpoints, each made through the API.
    expect(e.variants.spread.setup).toMatchObject({ busyEndpoints: 50, busyCreatedVia: "POST /api/v1/subscriptions" });
    expect(e.variants.idle200.setup.idleCreatedVia).toMatch(/^SQL/);
    // The dashboard's side of the same work runs with it.
    expect(Object.keys(report.results.endpoints_dashboard.queries).length).toBeGreaterThan(5);
    expect(fs.readFileSync(path.join(out, "latest.md"), "utf8")).toContain("### Thousands of endpoints");
  }, 300_000);
});
