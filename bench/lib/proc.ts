// Child processes of the bench: the receiver, worker processes, the ingest
// server. Every child is tracked and killed (by its own pid) when the bench
// exits, whatever happens.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");
const children = new Set<ChildProcess>();

export function killAll() {
  for (const c of children)
    if (c.exitCode === null && c.pid) {
      try {
        process.kill(c.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
  children.clear();
}
process.on("exit", killAll);

export type Child = {
  proc: ChildProcess;
  pid: number;
  /** The last lines it printed (stdout and stderr), for error messages. */
  tail: () => string;
  /** Resolves with the first stdout line matching `re`. */
  waitFor: (re: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>;
  /** VmHWM (peak RSS) in MB from /proc, or null once it has exited. */
  peakRssMb: () => number | null;
  stop: (graceMs?: number) => Promise<number | null>;
};

export function startChild(args: string[], opts: { env?: Record<string, string | undefined>; name: string; nodeArgs?: string[] }): Child {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(proc);
  const lines: string[] = [];
  const watchers: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  // BENCH_CHILD_LOG=dir: each child's whole output also goes to dir/<name>.<pid>.log (GC traces, say).
  const logTo = process.env.BENCH_CHILD_LOG ? path.join(process.env.BENCH_CHILD_LOG, `${opts.name.replace(/[^\w.-]+/g, "_")}.${proc.pid}.log`) : null;
  const onData = (buf: Buffer) => {
    if (logTo) fs.appendFileSync(logTo, buf);
    for (const line of buf.toString("utf8").split("\n")) {
      if (!line) continue;
      lines.push(line);
      if (lines.length > 50) lines.shift();
      for (const w of [...watchers]) {
        const m = line.match(w.re);
        if (m) {
          watchers.splice(watchers.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => (children.delete(proc), resolve(code))));
  const tail = () => lines.slice(-15).join("\n");
  return {
    proc,
    pid: proc.pid!,
    tail,
    waitFor(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${opts.name}: no line matching ${re} within ${timeoutMs} ms. Output:\n${tail()}`)), timeoutMs);
        exited.then((code) => reject(new Error(`${opts.name} exited with ${code} before printing ${re}. Output:\n${tail()}`)));
        watchers.push({ re, resolve: (m) => (clearTimeout(t), resolve(m)) });
      });
    },
    peakRssMb() {
      try {
        const s = fs.readFileSync(`/proc/${proc.pid}/status`, "utf8");
        const m = s.match(/VmHWM:\s+(\d+) kB/);
        return m ? Math.round(Number(m[1]) / 102.4) / 10 : null;
      } catch {
        return null;
      }
    },
    async stop(graceMs = 5_000) {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.exitCode === null && proc.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

export type Receiver = { url: (prefix: string) => string; port: number; stats: () => Promise<{ total: number; byPrefix: Record<string, number> }>; child: Child };

export async function startReceiver(): Promise<Receiver> {
  const child = startChild(["bin/run-ts.mjs", "bench/receiver.ts"], { name: "receiver" });
  const m = await child.waitFor(/^READY (\d+)/, 20_000);
  const port = Number(m[1]);
  return {
    port,
    url: (prefix) => `http://127.0.0.1:${port}/${prefix}`,
    stats: async () => {
      const r = await fetch(`http://127.0.0.1:${port}/__stats`);
      return (await r.json()) as { total: number; byPrefix: Record<string, number> };
    },
    child,
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
