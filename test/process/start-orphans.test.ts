// `hookledger start` killed with SIGKILL (the OOM killer, `kill -9`) cannot
// stop its children. They stop by themselves (lib/server/supervisor.ts): the
// dashboard, which would otherwise hold the port the next start needs, and
// the workers, which nobody would watch. A real start on a fresh embedded
// PostgreSQL over the existing build, as test/process/start-quiet.test.ts runs it.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../lib/db/embedded";

let child: ChildProcess | undefined;
let dir: string | undefined;
let kids: number[] = [];

afterAll(() => {
  for (const pid of [child?.pid, ...kids, ...postgresPids()])
    try {
      if (pid) process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function postgresPids(): number[] {
  if (!dir) return [];
  return execFileSync("ps", ["-e", "-o", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes("postgres") && l.includes(path.join(dir!, "postgres")))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** The node processes start runs (the embedded PostgreSQL, also its child, is meant to outlive it: docs/PLATFORM.md). */
const nodeChildrenOf = (pid: number): number[] =>
  execFileSync("ps", ["-e", "-o", "pid=,ppid=,comm="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, ppid, comm]) => Number(ppid) === pid && comm === "node")
    .map(([p]) => Number(p));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

describe("hookledger start killed with SIGKILL", () => {
  it("its dashboard and workers stop within seconds, and the port is free again", { timeout: 180_000 }, async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-orphans-"));
    const port = await freePort();
    const rest = { ...process.env };
    delete rest.DATABASE_URL;
    child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "start", "--port", String(port), "--host", "127.0.0.1", "--workers", "2"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...rest, HOOKLEDGER_DATA_DIR: dir, HOOKLEDGER_START_SKIP_BUILD: "1" },
    });
    let output = "";
    child.stdout!.on("data", (b) => (output += String(b)));
    child.stderr!.on("data", (b) => (output += String(b)));
    const end = Date.now() + 150_000;
    while (!output.includes("hookledger is running")) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`start did not come up:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    kids = nodeChildrenOf(child.pid!); // the dashboard and the two workers

    expect(kids.length, output).toBeGreaterThanOrEqual(3);

    child.kill("SIGKILL");
    const until = Date.now() + 20_000;
    while (kids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    const left = kids.filter(alive);
    const shown = left.length ? execFileSync("ps", ["-o", "pid,ppid,args", "-p", left.join(",")], { encoding: "utf8" }).trim() : "";
    expect(left, `still running after start was killed:\n${shown}`).toEqual([]);
    expect(await portFree(port)).toBe(true);
  });
});
