// `hookledger start` killed with SIGKILL (the OOM killer, `kill -9`) cannot
// stop its children. They stop by themselves (lib/server/supervisor.ts): the
// dashboard, which would otherwise hold the port the next start needs, and
// the workers, which nobody would watch. A real start on a fresh embedded
// PostgreSQL over the existing build (test/helpers/start-process.ts).
import { execFileSync } from "node:child_process";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { killStarted, startHookledger, type Started } from "../helpers/start-process";

const started: Started[] = [];
afterEach(() => killStarted(started));

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
    const { child, port, output } = await startHookledger(started, { prefix: "hl-orphans-", args: ["--workers", "2"] });
    const kids = nodeChildrenOf(child.pid!); // the dashboard and the two workers
    expect(kids.length, output.join("")).toBeGreaterThanOrEqual(3);

    child.kill("SIGKILL");
    const until = Date.now() + 20_000;
    while (kids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    const left = kids.filter(alive);
    const shown = left.length ? execFileSync("ps", ["-o", "pid,ppid,args", "-p", left.join(",")], { encoding: "utf8" }).trim() : "";
    expect(left, `still running after start was killed:\n${shown}`).toEqual([]);
    expect(await portFree(port)).toBe(true);
  });
});
