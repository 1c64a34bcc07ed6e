// Renders bench/results/latest.json as Markdown: the figures table (each with
// its reference measured in the same run) and the profiles behind them. A full
// run writes it between the markers in BENCHMARKS.md; the prose around the
// markers is kept.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

/* eslint-disable @typescript-eslint/no-explicit-any */
type Any = any;

const n = (x: unknown, digits = 0) =>
  typeof x === "number" && Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "—";
const pct = (x: unknown) => (typeof x === "number" ? `${n(x * 100, 1)}%` : "—");
const yes = (ok: boolean | null | undefined) => (ok === null || ok === undefined ? "—" : ok ? "**met**" : "**missed**");

export function renderMarkdown(report: Any): string {
  const r = report.results ?? {};
  const m = report.machine ?? {};
  const rows: string[][] = [];
  const add = (...c: string[]) => rows.push(c);
  engineRows(r, add);
  serverRows(r, add);
  const out: string[] = [];
  out.push(
    `Command: \`${report.command}\` — mode ${report.mode}, ${report.complete ? "complete" : "**incomplete**"}, started ${report.startedAt}, took ${n(report.durationSeconds)} s.`,
  );
  out.push("");
  out.push(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${n(m.memoryGb, 1)} GB memory, ${m.os}; Node ${m.node}; PostgreSQL ${m.postgres?.version} (${m.postgresMode}; ` +
      `synchronous_commit=${m.postgres?.synchronous_commit}, fsync=${m.postgres?.fsync}, shared_buffers=${m.postgres?.shared_buffers}); load average at start ${(m.loadAverageAtStart ?? []).join(", ")}.`,
  );
  out.push("Postgres, the worker process(es), the receiver and the load generators all share the same 2 cores; these are the figures of one run.");
  out.push("");
  out.push("| # | measurement | result | reference (same run) | ratio | target | |");
  out.push("|---|---|---|---|---|---|---|");
  for (const row of rows) out.push(`| ${row.join(" | ")} |`);
  if (Object.keys(report.errors ?? {}).length) {
    out.push("");
    out.push("Failed steps:");
    for (const [k, v] of Object.entries<string>(report.errors)) out.push(`- ${k}: ${String(v).split("\n")[0]}`);
  }
  if (r.endpoints) out.push("", ...endpointsSection(r.endpoints));
  if (r.peers) out.push("", ...peersSection(r.peers));
  timeSection(report, out);
  return out.join("\n") + "\n";
}

type Add = (...c: string[]) => void;

/** The table's rows for the engine: the ceiling, commit latency, drains, cron sweep, retry timing, fairness, redrive pacing. */
function engineRows(r: Any, add: Add) {
  const ceiling = r.ceiling?.perSecond as number | undefined;
  if (r.ceiling) add("1", "Ceiling: undici Pool POSTs/s to the local receiver, no DB", `${n(ceiling)}/s`, "—", "—", "reference", "—");
  const cl = r.commit_latency;
  if (cl)
    add(
      "1",
      "Reference: one small INSERT + commit, sequential, synchronous_commit on",
      `p50 ${n(cl.synchronousCommitOnMs?.p50, 2)} ms, p99 ${n(cl.synchronousCommitOnMs?.p99, 2)} ms`,
      `synchronous_commit off: p50 ${n(cl.synchronousCommitOffMs?.p50, 2)} ms`,
      "—",
      "reference",
      "—",
    );
  for (const w of [1, 2, 4]) {
    const d = r[`drain_${w}w`];
    if (!d) continue;
    const ok = w === 1 ? d.completed && d.perSecond >= 5000 : null;
    // A repeated drain (the one-worker target) is held against its own ceiling, measured just before it.
    const ref = d.ceilingPerSecond ?? ceiling;
    const reps = Array.isArray(d.repeats) && d.repeats.length > 1 ? d.repeats : null;
    add(
      "2",
      `Drain ${n(d.deliveries)} deliveries, ${w} worker process${w > 1 ? "es" : ""} (attempt rows: ${n(d.attemptRows)})${reps ? `: median of ${reps.length} runs` : ""}`,
      `${n(d.perSecond)}/s (${n(d.seconds, 2)} s)${reps ? `; the ${reps.length} runs: ${reps.map((x: Any) => `${n(x.perSecond)}/s at a ${n(x.ceilingPerSecond)}/s ceiling`).join(", ")}` : ""}`,
      `ceiling ${n(ref)}/s`,
      ref ? pct(d.perSecond / ref) : "—",
      w === 1 ? "≥ 5,000/s (stretch 10,000/s)" : "—",
      w === 1 ? yes(ok) + (d.perSecond >= 10000 ? " (stretch met)" : "") : "—",
    );
  }
  const mc = r.drain_1w_mc100;
  if (mc)
    add(
      "2",
      `Diagnostic: drain, 1 worker, max_concurrency raised from 10 to 100 per subscription`,
      `${n(mc.perSecond)}/s (${n(mc.seconds, 2)} s)`,
      `ceiling ${n(ceiling)}/s`,
      ceiling ? pct(mc.perSecond / ceiling) : "—",
      "—",
      "—",
    );
  const d1 = r.drain_1w;
  if (d1) {
    const peak = Math.max(...[1, 2, 4].flatMap((w) => (r[`drain_${w}w`]?.peakRssMb ?? []).filter((x: unknown) => typeof x === "number")));
    add("2", "Peak worker RSS (VmHWM), any drain run", `${n(peak, 1)} MB`, "—", "—", "< 250 MB", yes(peak < 250));
  }
  if (r.cron_sweep)
    add(
      "3",
      `Baseline: cron sweep, one row at a time (${r.cron_sweep.timeBoxSeconds} s time box)`,
      `${n(r.cron_sweep.perSecond)}/s (40k backlog: ${n(r.cron_sweep.extrapolatedSecondsForBacklog, 0)} s)`,
      d1 ? `1 worker ${n(d1.perSecond)}/s` : "—",
      d1 ? `worker is ${n(d1.perSecond / r.cron_sweep.perSecond, 1)}×` : "—",
      "contrast",
      "—",
    );
  const rt = r.retry_timing;
  if (rt)
    add(
      "4",
      `Retry timing: ${n(rt.retries)} due across ${rt.spreadSeconds} s, fresh traffic offered ${n(rt.freshOffered)}/s (published ${n(rt.freshPublished?.perSecond)}/s)`,
      `lateness p50 ${n(rt.latenessMs?.p50)} ms, p99 ${n(rt.latenessMs?.p99)} ms, max ${n(rt.latenessMs?.max)} ms`,
      `fresh publish→delivered p50 ${n(rt.freshPublishToDeliveredMs?.p50)} ms, p99 ${n(rt.freshPublishToDeliveredMs?.p99)} ms`,
      `p99 / target ${n(rt.p99OverTarget, 2)}`,
      "p99 < 1 s",
      yes(rt.completed && rt.latenessMs?.p99 !== null && rt.latenessMs?.p99 < 1000),
    );
  const f = r.fairness;
  if (f)
    add(
      "5",
      `Fairness: ${f.healthySubscriptions} healthy subscriptions (${n(f.healthyDeliveries)} deliveries) + 1 endpoint that hangs to the 10 s timeout (${n(f.badEndpoint?.deliveriesQueued)} queued)`,
      `healthy ${n(f.withBad?.perSecond)}/s with it`,
      `${n(f.alone?.perSecond)}/s without it${Array.isArray(f.alone?.bracket) ? ` (mean of the drains before and after: ${f.alone.bracket.map((x: number) => `${n(x)}/s`).join(", ")})` : ""}`,
      `${n(f.keptPct, 1)}% kept${Array.isArray(f.rounds) && f.rounds.length > 1 ? ` (median of ${f.rounds.length} bracketed rounds: ${f.rounds.map((x: Any) => `${n(x.keptPct, 1)}%`).join(", ")})` : ""}`,
      "≥ 90%",
      yes(f.withBad?.completed && f.keptPct >= 90),
    );
  const rd = r.redrive_pacing;
  if (rd) {
    add(
      "6",
      `Redrive pacing: ${n(rd.deadLetters)} dead letters at a set ${n(rd.setRatePerSecond)}/s (createRedriveBatch + worker/redrive-pacer.ts)`,
      `${n(rd.achievedRatePerSecond, 1)}/s achieved (sent ${n(rd.redrivenSentPerSecond, 1)}/s)`,
      `set ${n(rd.setRatePerSecond)}/s`,
      n(rd.achievedOverSet, 3),
      "within 10%",
      yes(Math.abs(rd.achievedOverSet - 1) <= 0.1),
    );
    add(
      "6",
      `Fresh traffic during the redrive (offered ${n(rd.freshOfferedPerSecond)}/s)`,
      `${n(rd.freshDuring?.deliveredPerSecond)}/s, publish→delivered p99 ${n(rd.freshDuring?.publishToDeliveredMs?.p99)} ms`,
      `before: ${n(rd.freshBefore?.deliveredPerSecond)}/s, p99 ${n(rd.freshBefore?.publishToDeliveredMs?.p99)} ms`,
      n(rd.freshDuringOverBefore, 3),
      "within 10%",
      rd.freshBefore?.deliveredPerSecond < 0.9 * rd.freshOfferedPerSecond
        ? "inconclusive: the worker did not carry the offered load even before the redrive"
        : yes(Math.abs(rd.freshDuringOverBefore - 1) <= 0.1),
    );
  }
}

/** The table's rows for the dashboard's queries and the ingest. */
function serverRows(r: Any, add: Add) {
  const ig = r.ingest;
  const ds = r.dashboard;
  if (ds)
    for (const [name, q] of Object.entries<Any>(ds.queries ?? {}))
      add(
        "7",
        `Dashboard: ${name}`,
        `p50 ${n(q.p50, 1)} ms, p95 ${n(q.p95, 1)} ms${q.error ? `; error: ${String(q.error).slice(0, 80)}` : ""}`,
        `${n(q.n)} calls`,
        `p95 / target ${n(q.p95 / 150, 2)}`,
        "p95 < 150 ms",
        yes(q.meetsTarget),
      );
  for (const [key, label] of [
    ["routeHandlerInNodeHttp", "route handler in node:http"],
    ["customServer", "server.ts (hookledger start; reference: Next's 404 in the same process)"],
    ["nextStart", "next start"],
  ] as const) {
    const x = ig?.[key];
    if (!x) continue;
    if (x.error) {
      add("8", `Ingest via ${label}`, `failed: ${String(x.error).split("\n")[0]}`, "—", "—", "≥ 2,000 events/s", "—");
      continue;
    }
    add(
      "8",
      `Ingest: POST /api/v1/events, fan-out ${n(x.fanOut, 1)}, ${x.concurrency} concurrent, via ${label}`,
      `${n(x.perSecond)} events/s (p50 ${n(x.latencyMs?.p50, 1)} ms, p99 ${n(x.latencyMs?.p99, 1)} ms)`,
      `same server, no-op handler ${n(x.referenceNoopPerSecond)}/s`,
      pct(x.ratioToReference),
      "≥ 2,000 events/s",
      yes(x.perSecond >= 2000),
    );
    const w = x.whatIf?.oneStatementRawPg;
    if (w)
      add(
        "8",
        `Comparison: one statement per event over raw pg, ungrouped (bench/bare-ingest-server.ts)`,
        `${n(w.perSecond)} events/s (p50 ${n(w.latencyMs?.p50, 1)} ms, fan-out ${n(w.fanOut, 1)})`,
        `same server, no-op handler ${n(x.referenceNoopPerSecond)}/s`,
        pct(w.ratioToReference),
        "≥ 2,000 events/s",
        "(comparison)",
      );
  }
  for (const [key, label] of [
    ["batchRouteHandlerInNodeHttp", "route handler in node:http"],
    ["batchCustomServer", "server.ts (hookledger start)"],
    ["batchCustomServerFullAnswers", "server.ts (hookledger start)"],
  ] as const) {
    const x = ig?.[key];
    if (!x || x.error) continue;
    add(
      "8",
      `Ingest: POST /api/v1/events/batch, batches of ${x.batchSize}, ${x.concurrency} in flight, fan-out ${n(x.fanOut, 1)}, answers ${x.answers ?? "with deliveries"}, via ${label}`,
      `${n(x.perSecond)} events/s (batch p50 ${n(x.batchLatencyMs?.p50, 1)} ms, p99 ${n(x.batchLatencyMs?.p99, 1)} ms)`,
      "—",
      "—",
      "≥ 10,000 events/s",
      yes(x.perSecond >= 10_000),
    );
  }
}

/** "Where the time goes": CPU per measurement, the top statements and the profiles, appended to `out`. */
function timeSection(report: Any, out: string[]) {
  const r = report.results ?? {};
  const ig = r.ingest;
  const m = report.machine ?? {};
  const d1 = r.drain_1w;
  const ds = r.dashboard;
  const stmts = (title: string, list: Any[] | null | undefined) => {
    if (!list?.length) return;
    out.push("");
    out.push(`${title} (pg_stat_statements, by total time):`);
    out.push("");
    out.push("| statement | calls | mean ms | total ms | share |");
    out.push("|---|---|---|---|---|");
    for (const s of list)
      out.push(`| ${String(s.query).replace(/\|/g, "\\|").slice(0, 110)} | ${n(s.calls)} | ${n(s.meanMs, 2)} | ${n(s.totalMs)} | ${n(s.sharePct, 1)}% |`);
  };
  const prof = (title: string, p: Any) => {
    if (!p?.byFunction) return;
    out.push("");
    out.push(`${title}: \`${p.file}\`, ${p.window ?? "the whole process"}: busy ${n(p.busyPct, 1)}% of ${n(p.wallMs)} ms wall. Self time, share of busy time:`);
    out.push("");
    out.push("| where (file) | share | | function | share |");
    out.push("|---|---|---|---|---|");
    for (let i = 0; i < Math.max(p.byFile.length, p.byFunction.length) && i < 10; i++) {
      const a = p.byFile[i];
      const b = p.byFunction[i];
      out.push(`| ${a ? a.name : ""} | ${a ? `${n(a.pctOfBusy, 1)}%` : ""} | | ${b ? b.name.replace(/\|/g, "\\|") : ""} | ${b ? `${n(b.pctOfBusy, 1)}%` : ""} |`);
    }
  };
  out.push("");
  out.push("### Where the time goes");
  const cpuLine = (label: string, c: Any) => {
    if (!c?.coresUsed) return;
    const parts = Object.entries<number>(c.coresUsed).map(([k, v]) => `${k} ${n(v, 2)}`);
    out.push(
      `- ${label}: ${parts.join(", ")} cores; the whole machine ${n(c.machineCoresBusy, 2)} of ${m.cpus} cores busy, of which ${n(c.otherCoresBusy, 2)} by processes outside the bench.`,
    );
  };
  out.push("");
  out.push("CPU used during each measurement (from /proc: the worker processes, the receiver, the bench process, our PostgreSQL's postmaster and backends):");
  out.push("");
  for (const w of [1, 2, 4]) cpuLine(`drain, ${w} worker${w > 1 ? "s" : ""}`, r[`drain_${w}w`]?.cpuDuringDrain);
  cpuLine("drain, 1 worker, max_concurrency 100", r.drain_1w_mc100?.cpuDuringDrain);
  cpuLine("ingest via the route handler", ig?.routeHandlerInNodeHttp?.cpuDuringRun);
  cpuLine("ingest via server.ts", ig?.customServer?.cpuDuringRun);
  cpuLine("batches via the route handler", ig?.batchRouteHandlerInNodeHttp?.cpuDuringRun);
  cpuLine("batches via server.ts", ig?.batchCustomServer?.cpuDuringRun);
  cpuLine("batches via server.ts, answers with deliveries", ig?.batchCustomServerFullAnswers?.cpuDuringRun);
  cpuLine("ingest via next start", ig?.nextStart?.cpuDuringRun);
  stmts("Drain, 1 worker: database statements", d1?.topStatements);
  prof("Drain, 1 worker, profiled run (`node --cpu-prof`) of the worker process", r.drain_1w_profiled?.cpuProfile);
  if (r.drain_1w_profiled) out.push(`\n(The profiled run drained at ${n(r.drain_1w_profiled.perSecond)}/s.)`);
  stmts("Ingest via the route handler: database statements", ig?.routeHandlerInNodeHttp?.topStatements);
  prof("Ingest server, profiled run", ig?.routeHandlerCpuProfile);
  if (ds) {
    out.push("");
    out.push(
      `Dashboard data: ${Object.entries<Any>(ds.loaded ?? {})
        .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : n(v)}`)
        .join(", ")}; loaded in ${n(ds.loadSeconds, 1)} s (${Object.entries<Any>(ds.loadTimings ?? {})
        .map(([k, v]) => `${k} ${v} s`)
        .join(", ")}).`,
    );
    for (const [name, q] of Object.entries<Any>(ds.queries ?? {})) stmts(`Dashboard, ${name}`, q.topStatements);
  }
}

/** The endpoints step (bench/scenarios/endpoints.ts): each drain's median, its ratio to the 20-endpoint drain, each round, the targets. */
function endpointsSection(e: Any): string[] {
  const out = [
    "### Thousands of endpoints: the drain beside idle subscriptions and spread over many",
    "",
    `${n(e.deliveries)} deliveries a drain, ${e.driven}; ${e.rounds} round${e.rounds > 1 ? "s" : ""}, the order rotating ` +
      `(${(e.order ?? []).map((o: string[]) => o.join(" → ")).join("; ")}). The figure: ${e.measure}; the median of the rounds.`,
    "",
    "| drain | how its subscriptions were made | published, events/s (each round) | deliveries/s (median) | each round | ÷ 20-endpoint drain (each round) | target | |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const v of Object.values<Any>(e.variants ?? {})) {
    const s = v.setup ?? {};
    const made =
      `${n(s.busyEndpoints)} busy through the API (${n(s.busySeconds, 1)} s)` + (s.idleSubscriptions ? `; ${n(s.idleSubscriptions)} idle: ${s.idleCreatedVia}` : "");
    const each = (v.runs ?? []).map((x: Any) => (x.error ? "failed" : `${n(x.perSecond)}${x.completed ? "" : " (incomplete)"}`)).join(", ");
    const ratio =
      v.ratioToBase === null || v.ratioToBase === undefined ? "—" : `${n(v.ratioToBase, 2)}× (${(v.roundRatios ?? []).map((x: number | null) => n(x, 2)).join(", ")})`;
    const published = (v.runs ?? []).map((x: Any) => n(x.ingest?.perSecond)).join(", ");
    out.push(`| ${v.label} | ${made} | ${published} | ${n(v.medianPerSecond)}/s | ${each} | ${ratio} | ${v.target ? `≥ ${v.target}×` : "—"} | ${yes(v.met)} |`);
  }
  for (const v of Object.values<Any>(e.variants ?? {}))
    for (const x of v.runs ?? []) if (x.error) out.push(`- ${v.label}, round ${x.round}: failed: ${String(x.error).split("\n")[0]}`);
  return out;
}

/** The peer comparison (bench/peers/run.ts): each system's median and rounds, hookledger's ratio to each, the target. */
function peersSection(p: Any): string[] {
  const median = (xs: unknown[]) => {
    const s = xs.filter((x): x is number => typeof x === "number").sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length / 2)] : null;
  };
  const settings = (o: Record<string, unknown>) =>
    Object.entries(o ?? {})
      .map(([k, v]) => (k === "what" ? String(v) : `${k} ${v}`))
      .join(", ");
  const out = [
    "### Peers: the same drain on pg-boss and graphile-worker",
    "",
    `${n(p.jobs)} signed 1 KB webhook POSTs over ${p.endpoints} endpoints to the same receiver, at most ${n(p.concurrency)} on the wire over ${p.connectionsPerOrigin} ` +
      `keep-alive connections, each system on a fresh database of the same server and in a process of its own; ${p.rounds} round${p.rounds > 1 ? "s" : ""}, ` +
      `the order rotating (${(p.order ?? []).map((o: string[]) => o.join(" → ")).join("; ")}). The figure: ${p.measure}; the median of the rounds.`,
    "",
    "| system | settings | jobs/s (median) | each round | hookledger ÷ system (each round) | worker CPU µs/job | Postgres µs/job |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const [name, s] of Object.entries<Any>(p.systems ?? {})) {
    const runs: Any[] = s.runs ?? [];
    const each = runs.map((x) => (x.error ? "failed" : `${n(x.perSecond)}${x.completed ? "" : " (incomplete)"}`)).join(", ");
    const ratio = name === "hookledger" ? "—" : `${n(p.ratios?.[name], 2)}× (${(p.roundRatios?.[name] ?? []).map((x: number | null) => n(x, 2)).join(", ")})`;
    out.push(
      `| ${name} ${s.version} | ${settings(s.settings)} | ${n(s.medianPerSecond)}/s | ${each} | ${ratio} | ${n(median(runs.map((x) => x.workerUsPerJob)))} | ${n(median(runs.map((x) => x.postgresUsPerJob)))} |`,
    );
  }
  out.push("");
  out.push(
    `Target: hookledger ≥ ${p.target}× the faster peer (${p.fasterPeer}): ${n(p.hookledgerOverFasterPeer, 2)}×, ${yes(p.hookledgerOverFasterPeer === null ? null : p.met)}.`,
  );
  for (const [name, s] of Object.entries<Any>(p.systems ?? {}))
    for (const x of s.runs ?? []) if (x.error) out.push(`- ${name}, round ${x.round}: failed: ${String(x.error).split("\n")[0]}`);
  return out;
}

/**
 * The name (without .json or .md) a run writes its results under. bench/results/latest.json is committed: the full run
 * that BENCHMARKS.md's figures come from, which this file renders whole. Any other run into that folder (--only,
 * --quick, --tiny) writes a file of its own beside it (latest-peers.json, latest-quick.json; not committed), so a quick
 * measurement leaves the table's run in place. A run with --out writes latest.json in its own folder.
 */
export function resultsBaseName(run: { mode: string; only?: string[]; out?: string }): string {
  if (run.out || (run.mode === "full" && !run.only)) return "latest";
  return `latest-${run.only ? run.only.join("+") : run.mode}`;
}

const BEGIN = "<!-- bench:begin (generated by npm run bench from bench/results/latest.json) -->";
const END = "<!-- bench:end -->";

/**
 * The checkout's commit, as a run that just ended measured it; `git` missing (an unpacked tarball) says so. The run's
 * own outputs (bench/results, which it writes after every step, and BENCHMARKS.md) are not changes to what it measured.
 */
export function checkoutCommit(cwd?: string): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const head = git("rev-parse", "--short", "HEAD");
    const changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results", ":(exclude)BENCHMARKS.md");
    return changed ? `\`${head}\` with uncommitted changes` : `\`${head}\``;
  } catch {
    return "unknown (no git checkout)";
  }
}

const TIME_GOES = "\n### Where the time goes";

/**
 * Replaces the generated section of BENCHMARKS.md, keeping everything around it.
 * The section's first line (the command and when it started) is followed by the
 * commit it measured: the checkout's when a run writes it, and the one already
 * written when the same run is rendered again (`bench/report.ts --write`), since
 * HEAD may have moved since the run. The file keeps the figures table (and the
 * peers'); where the time went (CPU by process, statements, profiles) grows with
 * the steps and stays in latest.json, which `bench/report.ts` renders whole, so the
 * file stays short enough to read.
 */
export function writeBenchmarksMd(file: string, section: string) {
  const cur = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  const i = cur.indexOf(BEGIN);
  const j = cur.indexOf(END);
  const old = i >= 0 && j > i ? cur.slice(i + BEGIN.length + 1, j).split("\n") : [];
  const cut = section.indexOf(TIME_GOES);
  const figures =
    cut < 0
      ? section
      : `${section.slice(0, cut + 1)}\nWhere the time went (CPU by process, the top statements, the profiles): \`node bin/run-ts.mjs bench/report.ts\` renders the run's bench/results/latest.json whole.\n`;
  const [first, ...rest] = figures.split("\n");
  const sameRun = old[0] === first && old[1]?.startsWith("Commit: ");
  const stamped = [first, sameRun ? old[1] : `Commit: ${checkoutCommit()}.`, ...rest].join("\n");
  const next = i >= 0 && j > i ? cur.slice(0, i + BEGIN.length) + "\n" + stamped + cur.slice(j) : `${cur.trimEnd()}\n\n${BEGIN}\n${stamped}${END}\n`;
  fs.writeFileSync(file, next);
}

if (process.argv[1]?.endsWith("report.ts")) {
  // node bin/run-ts.mjs bench/report.ts [latest.json] [--write]: re-render without re-running.
  const file = process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "bench/results/latest.json";
  const md = renderMarkdown(JSON.parse(fs.readFileSync(file, "utf8")));
  if (process.argv.includes("--write")) writeBenchmarksMd("BENCHMARKS.md", md);
  else process.stdout.write(md);
}
