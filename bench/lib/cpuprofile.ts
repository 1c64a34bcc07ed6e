// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by
// package/file, so BENCHMARKS.md can say where a worker's CPU went.
import fs from "node:fs";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function where(url: string): string {
  if (!url) return "(native/V8)";
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (m) return m[1];
  if (url.startsWith("node:")) return url;
  const i = url.indexOf("/work/main/");
  return i >= 0 ? url.slice(i + "/work/main/".length) : url.replace(/^file:\/\//, "");
}

/** `lastSeconds`: only the samples of the profile's last N seconds (e.g. the drain, not the process's start-up). */
function summarizeProfile(file: string, top = 12, lastSeconds?: number) {
  const p = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const from = lastSeconds ? Math.max(p.startTime, p.endTime - lastSeconds * 1e6) : p.startTime;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from) continue;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const totalUs = p.endTime - from;
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let idle = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") {
      idle += us;
      continue;
    }
    const w = where(n.callFrame.url);
    const key = `${name} ${w}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ""}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    pkg.set(w, (pkg.get(w) ?? 0) + us);
  }
  const busy = totalUs - idle;
  const pct = (us: number) => Math.round((1000 * us) / Math.max(1, busy)) / 10;
  const sorted = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => ({ name: k, ms: Math.round(us / 1000), pctOfBusy: pct(us) }));
  return {
    wallMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busy / 1000),
    busyPct: Math.round((1000 * busy) / Math.max(1, totalUs)) / 10,
    byFunction: sorted(fn),
    byFile: sorted(pkg),
  };
}

/** The profile a process wrote on exit (its main thread: the largest file of that pid), summarised. */
export function profileOf(dir: string, pid: number, top = 12, lastSeconds?: number) {
  let files: string[] = [];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith(".cpuprofile") && f.includes(`.${pid}.`));
  } catch {
    return null;
  }
  if (files.length === 0) return null;
  const biggest = files.map((f) => ({ f, size: fs.statSync(`${dir}/${f}`).size })).sort((a, b) => b.size - a.size)[0].f;
  return {
    file: `${dir}/${biggest}`.replace(/^.*\/bench\//, "bench/"),
    window: lastSeconds ? `the last ${lastSeconds} s of the process` : "the whole process",
    ...summarizeProfile(`${dir}/${biggest}`, top, lastSeconds),
  };
}

if (process.argv[1]?.endsWith("cpuprofile.ts")) {
  for (const f of process.argv.slice(2)) console.log(f, JSON.stringify(summarizeProfile(f), null, 1));
}
