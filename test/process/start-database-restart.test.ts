// `hookledger start` when its embedded PostgreSQL dies under it (kill -9 of the
// postmaster, the OOM killer): start says so on the terminal, starts it again
// on the same port with the supervisor's backoff, and the dashboard and the
// workers reconnect by themselves; Ctrl-C afterwards, or during the restart,
// still stops everything, the new server included. A server that cannot be
// started again is given up on: start says so and exits 1. Real processes on
// a fresh embedded PostgreSQL over the existing build
// (test/helpers/start-process.ts).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { findRunningEmbedded } from "../../lib/db/embedded";
import { groupPids, killStarted, startHookledger as startIn, stopAndWaitGone, until, waitGone, type Started } from "../helpers/start-process";

const started: Started[] = [];
const cleanups: (() => void)[] = [];
const startHookledger = (dir?: string) => startIn(started, { dir, prefix: "hl-pgdown-", env: { HOOKLEDGER_HEARTBEAT_MS: "500" } });

afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  killStarted(started);
});

/** The postmaster's pid from its pid file, 0 while there is none. */
function postmasterPid(dir: string): number {
  try {
    return Number(fs.readFileSync(path.join(dir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return 0;
  }
}

async function health(port: number): Promise<number | null> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/api/health`)).status;
  } catch {
    return null;
  }
}

/** A worker has beaten in the last 2 s (HOOKLEDGER_HEARTBEAT_MS 500): it reaches the database. */
async function workerBeating(dir: string): Promise<boolean> {
  const url = findRunningEmbedded(dir);
  if (!url) return false;
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  try {
    await c.connect();
    const { rows } = await c.query(`SELECT 1 FROM worker_heartbeats WHERE stopped_at IS NULL AND beat_at > now() - interval '2 seconds'`);
    return rows.length > 0;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

describe("hookledger start, its embedded PostgreSQL killed", () => {
  it("says so, starts it again on the same port, the dashboard and the workers reconnect, and Ctrl-C then stops the new one", { timeout: 240_000 }, async () => {
    const s = await startHookledger();
    await until("health 200", async () => (await health(s.port)) === 200, 60_000, s.output);
    const url = findRunningEmbedded(s.dir);
    const old = postmasterPid(s.dir);
    process.kill(old, "SIGKILL");

    const said = await until(
      "start saying so",
      () => s.output.join("").match(/hookledger: the embedded PostgreSQL \(pid (\d+)\) exited unexpectedly[^\n]*/)?.[0],
      10_000,
      s.output,
    );
    expect(said).toBe(
      `hookledger: the embedded PostgreSQL (pid ${old}) exited unexpectedly (signal SIGKILL); restarting it in 1 s (its log: ${path.join(s.dir, "postgres.log")}). The dashboard and the workers reconnect by themselves.`,
    );
    await until("running again", () => s.output.join("").match(/the embedded PostgreSQL is running again \(pid \d+, port \d+\)/), 30_000, s.output);
    expect(postmasterPid(s.dir)).not.toBe(old);
    // The same address: the children hold it.
    expect(findRunningEmbedded(s.dir)).toBe(url);
    await until("health 200 again", async () => (await health(s.port)) === 200, 30_000, s.output);
    await until("a worker beating again", () => workerBeating(s.dir), 30_000, s.output);

    expect(await stopAndWaitGone(s)).toBe(0);
    const log = fs.readFileSync(path.join(s.dir, "postgres.log"), "utf8");
    // The restarted server recovered from the kill, then shut down cleanly.
    expect(log).toMatch(/database system was interrupted|not properly shut down/);
    expect(log.trimEnd().split("\n").at(-1)).toMatch(/database system is shut down/);
  });

  it("one it found running (left by a start that was killed) is watched too, started again, and then stopped by Ctrl-C", { timeout: 240_000 }, async () => {
    const first = await startHookledger();
    const server = postmasterPid(first.dir);
    // Killed with SIGKILL: its dashboard and workers stop by themselves (start-orphans), its database runs on.
    first.child.kill("SIGKILL");
    await until("the first start's children gone", () => groupPids(first.child.pid!).length === 0, 30_000, first.output);
    const s = await startHookledger(first.dir);
    expect(postmasterPid(s.dir)).toBe(server);
    await until("a worker beating", () => workerBeating(s.dir), 30_000, s.output);
    process.kill(server, "SIGKILL");
    // Not start's child: only its disappearance is seen, not how it ended.
    await until(
      "start saying so",
      () => s.output.join("").includes(`the embedded PostgreSQL (pid ${server}) exited unexpectedly; restarting it in 1 s`),
      10_000,
      s.output,
    );
    await until("running again", () => s.output.join("").match(/the embedded PostgreSQL is running again/), 60_000, s.output);
    await until("a worker beating again", () => workerBeating(s.dir), 30_000, s.output);
    expect(await stopAndWaitGone(s)).toBe(0);
    expect(fs.readFileSync(path.join(s.dir, "postgres.log"), "utf8").trimEnd().split("\n").at(-1)).toMatch(/database system is shut down/);
  });

  it("Ctrl-C while it is being started again leaves no postgres behind", { timeout: 240_000 }, async () => {
    const s = await startHookledger();
    const old = postmasterPid(s.dir);
    process.kill(old, "SIGKILL");
    await until("start saying so", () => s.output.join("").includes("restarting it in 1 s"), 10_000, s.output);
    // The new postmaster has written its pid file: it is starting (crash recovery), not yet said to be running.
    await until("a new postmaster", () => ![0, old].includes(postmasterPid(s.dir)), 10_000, s.output);
    expect(await stopAndWaitGone(s)).toBe(0);
    expect(s.output.join("")).toMatch(/hookledger stopped/);
  });

  it("gives up on a server that cannot be started again, says so, and exits 1 with nothing left running", { timeout: 240_000 }, async () => {
    const s = await startHookledger();
    const dbPort = Number(new URL(findRunningEmbedded(s.dir)!).port);
    process.kill(postmasterPid(s.dir), "SIGKILL");
    // Another program takes its port while it is down: it cannot listen there, and its clients know no other.
    const squatter = net.createServer();
    await until(
      "the port",
      () => new Promise<boolean>((resolve) => squatter.once("error", () => resolve(false)).listen(dbPort, "127.0.0.1", () => resolve(true))),
      5_000,
    );
    cleanups.push(() => squatter.close());
    // 1 + 2 + 4 + 8 s of backoff, then the fifth exit within a minute.
    const code = await Promise.race([s.exited, new Promise((r) => setTimeout(() => r("still running"), 60_000))]);
    const out = s.output.join("");
    expect(code, out.slice(-3000)).toBe(1);
    expect(out).toContain(
      `hookledger: the embedded PostgreSQL did not start again (port ${dbPort} is taken by another program; PostgreSQL must come back on the port its clients know); trying again in 2 s.`,
    );
    expect(out).toContain(
      `hookledger: the embedded PostgreSQL exited or failed to start 5 times within 60 s (last: could not start: port ${dbPort} is taken by another program; PostgreSQL must come back on the port its clients know); not restarted. Its log: ${path.join(s.dir, "postgres.log")}. Fix the cause and run start again; stopping hookledger.`,
    );
    // Without a database the workers cannot finish anyway: they are not given their whole grace period.
    const stopped = out.match(/hookledger stopped \(([\d.]+) s: [^\n]*\)/);
    expect(stopped, out.slice(-3000)).toBeTruthy();
    expect(Number(stopped![1])).toBeLessThan(5);
    await waitGone(s);
  });
});
