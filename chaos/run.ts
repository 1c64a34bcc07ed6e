// `npm run chaos [-- --events N --seed S --size ci]`: the fault-injection
// scenario at full size (chaos/scenario.ts), its report on stdout and in
// chaos/results/latest.json (plus one file per run). Exit 1 when an
// invariant broke; the report names the deliveries that broke it.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

// Worker-side noise stays in the workers' log files; the driver logs warnings only.
process.env.LOG_LEVEL ??= "warn";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "full" },
    events: { type: "string" },
    workers: { type: "string" },
    kills: { type: "string" },
    seed: { type: "string" },
    rate: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(`usage: npm run chaos [-- --size full|ci] [--events N] [--workers N] [--kills N] [--rate EVENTS_PER_S] [--seed S]

Runs the fault-injection scenario on a PostgreSQL of its own (in a temporary folder):
N events × 5 misbehaving receivers, worker processes SIGKILLed and replaced, Postgres
restarted, a subscription paused and resumed, a bulk redrive, leases expired under
workers mid-send. Then checks the invariants and writes chaos/results/latest.json.`);
  process.exit(0);
}

const { runChaos, formatReport, stopActiveRuns, FULL, CI } = await import("./scenario");
// Ctrl-C: stop the workers, receivers and Postgres this run started, then leave.
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.once(sig, () => {
    console.error(`${sig}: stopping the chaos run's workers and Postgres`);
    void stopActiveRuns().finally(() => process.exit(130));
  });
const base = values.size === "ci" ? CI : FULL;
const num = (v: string | undefined, name: string, fallback: number) => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} must be a positive number (got ${v}).`);
    process.exit(2);
  }
  return n;
};
const seed = num(values.seed, "seed", Math.floor(Math.random() * 2 ** 31));
const options = {
  ...base,
  events: num(values.events, "events", base.events),
  workers: num(values.workers, "workers", base.workers),
  kills: num(values.kills, "kills", base.kills),
  publishRate: num(values.rate, "rate", base.publishRate),
  seed,
  log: (line: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`),
};

const report = await runChaos(options);
console.log(formatReport(report));
const dir = path.resolve("chaos/results");
fs.mkdirSync(dir, { recursive: true });
const text = JSON.stringify(report, null, 2) + "\n";
fs.writeFileSync(path.join(dir, "latest.json"), text);
fs.writeFileSync(path.join(dir, `run-${report.runId}.json`), text);
console.log(`report: chaos/results/latest.json (and run-${report.runId}.json); worker logs were in ${report.runDir}/logs`);
// The run folder (database and logs) is kept only when something broke.
if (report.ok) fs.rmSync(report.runDir, { recursive: true, force: true });
else console.log(`kept ${report.runDir} (database files and worker logs) for inspection`);
process.exit(report.ok ? 0 : 1);
