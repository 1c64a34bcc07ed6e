// The CI-sized fault-injection run: the same scenario and checks as
// `npm run chaos` (chaos/scenario.ts), smaller numbers. It runs on a
// PostgreSQL of its own, because it restarts it under the workers.
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { CI, formatReport, runChaos, stopActiveRuns } from "../../chaos/scenario";

const SEED = Number(process.env.CHAOS_SEED ?? 10);

// After a timeout the run is still going: nothing it started may outlive the test file.
afterAll(() => stopActiveRuns());

describe("fault injection at CI size", () => {
  it(
    "workers SIGKILLed, Postgres restarted, a pause, a bulk redrive, leases expired mid-send: nothing lost, nothing applied twice",
    async () => {
      const report = await runChaos({
        ...CI,
        seed: SEED,
        log: (l) => console.log(`[chaos] ${l}`),
      });
      const text = formatReport(report, 30);
      console.log(text);
      if (report.ok) fs.rmSync(report.runDir, { recursive: true, force: true });
      expect(report.ok, `${text}\n\nworker and driver logs kept in ${report.runDir}/logs`).toBe(true);
      // The faults really happened.
      expect(report.faults.counts.kill).toBe(CI.kills);
      expect(report.faults.counts.postgres_restart).toBe(1);
      expect(report.faults.counts.pause).toBe(1);
      expect(report.faults.counts.resume).toBe(1);
      expect(report.faults.counts.redrive).toBe(1);
      expect(report.faults.counts.leases_expired).toBeGreaterThan(0);
    },
    // About a minute on a quiet 2-core box; generous for one shared with other work.
    600_000,
  );
});
