// Ctrl-C on `hookledger start` when the embedded PostgreSQL's shutdown
// checkpoint is slow (a slow disk; here its checkpointer is paused with
// SIGSTOP for a few seconds): start says it is waiting, waits, and the server
// shuts down cleanly, so the next start needs no crash recovery. A second
// Ctrl-C meanwhile stops it at once. Real processes on a fresh embedded
// PostgreSQL over the existing build (test/helpers/start-process.ts).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killStarted, postgresPids, startHookledger as startIn, stopAndWaitGone, until, waitGone, type Started } from "../helpers/start-process";

const started: Started[] = [];
const startHookledger = () => startIn(started, { prefix: "hl-checkpoint-" });
/** Checkpointers paused: one whose postmaster was killed is no longer its child, and would stay stopped. */
const paused: number[] = [];

afterEach(() => {
  for (const pid of paused.splice(0))
    try {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  killStarted(started);
});

function processes(): { pid: number; ppid: number; args: string }[] {
  return execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
}

/** Pauses the checkpointer of the server on `dir`: its shutdown checkpoint waits until SIGCONT. */
function pauseCheckpointer(dir: string): number {
  const master = Number(fs.readFileSync(path.join(dir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
  const checkpointer = processes().find((p) => p.ppid === master && p.args.includes("checkpointer"));
  expect(checkpointer, "the checkpointer").toBeTruthy();
  paused.push(checkpointer!.pid);
  process.kill(checkpointer!.pid, "SIGSTOP");
  return checkpointer!.pid;
}

describe("hookledger start, Ctrl-C with a slow shutdown checkpoint", () => {
  it("says it is waiting, waits for the checkpoint, and the database shuts down cleanly", { timeout: 240_000 }, async () => {
    const s = await startHookledger();
    const checkpointer = pauseCheckpointer(s.dir);
    process.kill(-s.child.pid!, "SIGINT");
    // Longer than the shutdown used to be allowed (4 s, then SIGKILL).
    await new Promise((r) => setTimeout(r, 6_000));
    expect(postgresPids(s.dir).length, `the server, still finishing its checkpoint\n${s.output.join("").slice(-2000)}`).toBeGreaterThan(0);
    expect(s.output.join("")).toContain("Waiting for PostgreSQL to finish writing its data to disk");
    process.kill(checkpointer, "SIGCONT");
    expect(await waitGone(s)).toBe(0);
    const log = fs.readFileSync(path.join(s.dir, "postgres.log"), "utf8");
    expect(log.trimEnd().split("\n").at(-1)).toMatch(/database system is shut down/);
    expect(s.output.join("")).toMatch(
      /Waiting for PostgreSQL to finish writing its data to disk \(its shutdown checkpoint\); Ctrl-C again stops it at once, to recover at the next start\.\nhookledger stopped \([\d.]+ s: .*database \d+\.\d s\)\./,
    );
  });

  it("a second Ctrl-C while it waits stops the database at once", { timeout: 240_000 }, async () => {
    const s = await startHookledger();
    pauseCheckpointer(s.dir);
    process.kill(-s.child.pid!, "SIGINT");
    await until("start saying it waits", () => s.output.join("").includes("Waiting for PostgreSQL to finish writing"), 30_000, s.output);
    const t0 = Date.now();
    // Immediate shutdown: the postmaster kills a child that does not stop within 5 s (the paused checkpointer).
    expect(await stopAndWaitGone(s, 20_000)).toBe(0);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(s.output.join("")).toContain(
      "Ctrl-C again: PostgreSQL stops at once, without its checkpoint; it recovers from its WAL at the next start (nothing committed is lost).",
    );
    expect(fs.readFileSync(path.join(s.dir, "postgres.log"), "utf8")).toMatch(/received immediate shutdown request/);
  });
});
