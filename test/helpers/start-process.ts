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

/** Starts it (on `dir`, or a fresh one named by `prefix`), records it in `started` for the test's clean-up, and waits until it says it runs. */
export async function startHookledger(started: Started[], opts: { dir?: string; prefix?: string; env?: Record<string, string> } = {}): Promise<Started> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), opts.prefix ?? "hl-start-"));
  const port = await freePort();
  const output: string[] = [];
  const rest = { ...process.env };
  delete rest.DATABASE_URL;
  const child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "start", "--port", String(port), "--host", "127.0.0.1"], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...rest, HOOKLEDGER_DATA_DIR: dir, HOOKLEDGER_START_SKIP_BUILD: "1", ...opts.env },
  });
  child.stdout!.on("data", (b) => output.push(String(b)));
  child.stderr!.on("data", (b) => output.push(String(b)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const s = { child, port, dir, output, exited };
  started.push(s);
  await until("running", () => output.join("").includes("hookledger is running"), 150_000, output);
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
