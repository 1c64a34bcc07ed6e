// `hookledger start` as a terminal runs it, for tests of what it does to its
// processes: in a process group of its own (-pid reaches all of it, as a
// terminal's Ctrl-C does), on a fresh data directory and embedded PostgreSQL,
// over the existing build; and the waits and process listings those tests share.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../lib/db/embedded";

export type Started = { child: ChildProcess; port: number; dir: string; output: string[]; exited: Promise<number | null> };

type StartOptions = { dir?: string; prefix?: string; env?: Record<string, string>; args?: string[]; unset?: string[] };

/** Starts it (on `dir`, or a fresh one named by `prefix`), records it in `started` for the test's clean-up, and waits until it says it runs. */
export async function startHookledger(started: Started[], opts: StartOptions = {}): Promise<Started> {
  const s = await spawnHookledger(started, opts);
  await until("running", () => s.output.join("").includes("hookledger is running"), 150_000, s.output);
  return s;
}

/** The same without the wait: for a start that is to fail, or that a test watches come up. `unset`: variables of this environment it does not get. */
export async function spawnHookledger(started: Started[], opts: StartOptions = {}): Promise<Started> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), opts.prefix ?? "hl-start-"));
  const port = await freePort();
  const output: string[] = [];
  const rest = { ...process.env };
  for (const k of ["DATABASE_URL", ...(opts.unset ?? [])]) delete rest[k];
  const child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "start", "--port", String(port), "--host", "127.0.0.1", ...(opts.args ?? [])], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...rest, HOOKLEDGER_DATA_DIR: dir, HOOKLEDGER_START_SKIP_BUILD: "1", ...opts.env },
  });
  // One list for both streams, in arrival order, as a terminal shows them.
  child.stdout!.on("data", (b) => output.push(String(b)));
  child.stderr!.on("data", (b) => output.push(String(b)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const s = { child, port, dir, output, exited };
  started.push(s);
  return s;
}

/** What `probe` returns once it is truthy, polled every 100 ms; past `ms`, an error naming `what` and the output's end. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms: number, out?: string[]): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${out ? `\n${out.join("").slice(-3000)}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The processes of a process group. */
export function groupPids(pgid: number): number[] {
  return execFileSync("ps", ["-e", "-o", "pid=,pgid="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([pid, g]) => g === pgid && pid)
    .map(([pid]) => pid);
}

/** The embedded PostgreSQL on `dir`: its postmaster (whose command line names the folder) and the postmaster's children. */
export function postgresPids(dir: string): number[] {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const masters = rows.filter((p) => p.args.includes("postgres") && p.args.includes(path.join(dir, "postgres"))).map((p) => p.pid);
  return [...masters, ...rows.filter((p) => masters.includes(p.ppid)).map((p) => p.pid)];
}

/** Ctrl-C as a terminal sends it (SIGINT to the whole process group), then `waitGone`. */
export async function stopAndWaitGone(s: Started, ms = 30_000): Promise<number | null> {
  process.kill(-s.child.pid!, "SIGINT");
  return waitGone(s, ms);
}

/** Waits until nothing of start's process group and no postgres of its data directory is left; resolves with start's exit code. */
export async function waitGone(s: Started, ms = 30_000): Promise<number | null> {
  await until("no process of the group and no postgres of the data dir", () => groupPids(s.child.pid!).length === 0 && postgresPids(s.dir).length === 0, ms, s.output);
  return s.exited;
}

/**
 * The clean-up after each test: kills whatever of `started` is left (the group and the postgres of its data directory,
 * woken first should a test have paused one), waits until it is gone, and removes the data directories (two starts may
 * share one). A dying process still writing there would leave the directory not empty.
 */
export async function killStarted(started: Started[]): Promise<void> {
  const all = started.splice(0);
  const left = () => all.flatMap((s) => [...groupPids(s.child.pid!), ...postgresPids(s.dir)]);
  for (const pid of left())
    try {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  // Not a failure of the test if one lingers (a zombie nobody reaps): the removal below is then the best it can do.
  await until("the killed processes gone", () => left().length === 0, 10_000).catch(() => {});
  for (const s of all) fs.rmSync(s.dir, { recursive: true, force: true, maxRetries: 5 });
}
