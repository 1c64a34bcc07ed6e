// Real worker processes (`node bin/hookledger.mjs worker`), as production runs
// them: spawned, SIGKILLed, replaced, and at the end stopped with SIGTERM.
// Each one's output goes to its own log file in the run folder.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export type WorkerProc = {
  n: number;
  pid: number;
  child: ChildProcess;
  logFile: string;
  startedAt: number;
  /** Set when it exits: the exit code, or the signal name. */
  exit: number | string | null;
  exited: Promise<number | string>;
  killedByUs: boolean;
};

/** CPU seconds (user + system) a process has used, from /proc; null if it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(rest[11]) + Number(rest[12])) / 100;
  } catch {
    return null;
  }
}

export class WorkerFleet {
  readonly all: WorkerProc[] = [];
  private seq = 0;

  constructor(private readonly opts: { databaseUrl: string; logDir: string; env: Record<string, string> }) {
    fs.mkdirSync(opts.logDir, { recursive: true });
  }

  get alive(): WorkerProc[] {
    return this.all.filter((w) => w.exit === null);
  }

  spawn(): WorkerProc {
    const n = ++this.seq;
    const logFile = path.join(this.opts.logDir, `worker-${n}.log`);
    const fd = fs.openSync(logFile, "a");
    // The worker reads its settings from the environment; vitest's own variables must not leak into it.
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith("VITEST") || k === "NODE_OPTIONS") delete env[k];
    // For investigating a worker failure, e.g. a --require that traces pg clients.
    if (process.env.CHAOS_WORKER_NODE_OPTIONS) env.NODE_OPTIONS = process.env.CHAOS_WORKER_NODE_OPTIONS;
    const child: ChildProcess = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "worker"], {
      cwd: process.cwd(),
      env: { ...env, DATABASE_URL: this.opts.databaseUrl, HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1", ...this.opts.env },
      stdio: ["ignore", fd, fd] as ("ignore" | number)[],
    });
    fs.closeSync(fd);
    const w: WorkerProc = {
      n,
      pid: child.pid!,
      child,
      logFile,
      startedAt: Date.now(),
      exit: null,
      killedByUs: false,
      exited: new Promise((resolve) => {
        child.once("exit", (code: number | null, sig: NodeJS.Signals | null) => {
          const e: number | string = code ?? String(sig);
          w.exit = e;
          resolve(e);
        });
      }),
    };
    this.all.push(w);
    return w;
  }

  async kill9(w: WorkerProc): Promise<void> {
    w.killedByUs = true;
    w.child.kill("SIGKILL");
    await w.exited;
  }

  /** SIGTERM to every live worker; resolves with each one's exit within `timeoutMs` (then SIGKILL, reported as "hung"). */
  async stopAll(timeoutMs: number): Promise<{ n: number; pid: number; exit: number | string }[]> {
    const live = this.alive;
    for (const w of live) w.child.kill("SIGTERM");
    return Promise.all(
      live.map(async (w) => {
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise<"hung">((r) => (timer = setTimeout(() => r("hung"), timeoutMs)));
        const r = await Promise.race([w.exited, hung]);
        clearTimeout(timer);
        if (r === "hung") {
          w.child.kill("SIGKILL");
          await w.exited;
          return { n: w.n, pid: w.pid, exit: "hung (SIGTERM ignored; SIGKILLed)" };
        }
        return { n: w.n, pid: w.pid, exit: r };
      }),
    );
  }

  /** Last resort on any exit path: nothing we started survives us. */
  killAllNow() {
    for (const w of this.alive) {
      try {
        w.child.kill("SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }

  /** Why a worker died, from its log: the uncaught error and where it was emitted, on one line. */
  crash(w: WorkerProc): string {
    let lines: string[];
    try {
      lines = fs
        .readFileSync(w.logFile, "utf8")
        .split("\n")
        .filter((l) => l && !l.startsWith("{"));
    } catch {
      return "";
    }
    const at = lines.findIndex((l) => /Unhandled|Error|error:/.test(l));
    const pick = (at < 0 ? lines.slice(-12) : lines.slice(at, at + 40))
      .filter((l) => !/^\s+at (node:|.*node_modules\/pg-protocol|.*node:internal)/.test(l) && !/^\s*[a-zA-Z]+: undefined,?$/.test(l))
      .map((l) => l.trim());
    return pick.join(" | ").slice(0, 900);
  }

  tail(w: WorkerProc, lines = 20): string {
    try {
      return fs.readFileSync(w.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }
}
