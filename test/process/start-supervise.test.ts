// `hookledger start` as people run it (real processes, embedded PostgreSQL in
// a fresh data directory): a killed worker is replaced, a worker that keeps
// crashing is given up on and /api/health says so, and Ctrl-C (SIGINT to the
// whole process group, as a terminal sends it) stops everything in under 5 s
// with the data kept for the next start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { findRunningEmbedded } from "../../lib/db/embedded";
import { groupPids, killStarted, postgresPids, spawnHookledger, stopAndWaitGone, until, type Started } from "../helpers/start-process";
import { createSub, seedEvents } from "../helpers/worker-helpers";

const started: Started[] = [];
afterEach(() => killStarted(started));

/** Started as people run it, not waited for: each test waits for what it needs. */
const startHookledger = (dir: string, env: Record<string, string> = {}, args: string[] = []) =>
  spawnHookledger(started, { dir, args, env: { HOOKLEDGER_HEARTBEAT_MS: "500", LOG_LEVEL: "info", ...env } });

async function health(port: number): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/api/health`);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

async function liveWorkers(port: number, dir: string): Promise<{ worker_id: string; pid: number }[]> {
  const url = findRunningEmbedded(dir);
  if (!url) return [];
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT * FROM worker_heartbeats WHERE stopped_at IS NULL AND beat_at > now() - interval '3 seconds'`);
    return rows as { worker_id: string; pid: number }[];
  } finally {
    await c.end();
  }
}

describe("hookledger start", () => {
  it("replaces a SIGKILLed worker while the dashboard keeps answering, and sends what it had in flight again at once", { timeout: 180_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-start-"));
    const s = await startHookledger(dir, { HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1" });
    await until("health 200", async () => (await health(s.port))?.status === 200, 120_000, s.output);
    const before = await liveWorkers(s.port, s.dir);
    expect(before.length).toBe(1);
    const oldPid = groupPids(s.child.pid!).find((p) => fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("worker"));
    expect(oldPid).toBeTruthy();
    // The worker has requests on the wire (the receiver never answers), each lease good for 60 s + 30 s.
    const db = new pg.Pool({ connectionString: findRunningEmbedded(dir)!, max: 2 });
    const hanging = http.createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", () => r()));
    const stuck = async () => (await db.query(`SELECT state, count(*)::int AS n FROM deliveries GROUP BY state`)).rows as { state: string; n: number }[];
    try {
      await createSub(db, {
        id: "sub_hangs",
        url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`,
        maxConcurrency: 3,
        retryPolicy: { timeoutMs: 60_000 },
      });
      await seedEvents(db, "evt_hang_", 3, ["sub_hangs"]);
      await until("3 in flight", async () => (await stuck()).find((r) => r.state === "in_flight")?.n === 3, 30_000, s.output);
      let dashboardDown = 0;
      const watching = setInterval(() => void health(s.port).then((h) => (h ? null : dashboardDown++)), 200);
      process.kill(oldPid!, "SIGKILL");
      // Not held until the leases run out: back to scheduled, each attempt recorded as possibly received.
      await until("the killed worker's deliveries taken back", async () => !(await stuck()).some((r) => r.state === "in_flight") && (await stuck()), 10_000, s.output);
      const attempts = (await db.query(`SELECT outcome, error_class, ambiguous FROM attempts WHERE subscription_id = 'sub_hangs' AND outcome = 'abandoned'`)).rows;
      expect(attempts).toEqual([0, 1, 2].map(() => ({ outcome: "abandoned", error_class: "lease_expired", ambiguous: true })));
      // Printed by start once its taking back has committed (the rows above): wait for it to come through the pipe.
      await until(
        "start saying it took the deliveries back",
        () => /worker 1 \(pid \d+\) had 3 deliveries in flight; each is recorded as possibly received and will be sent again/.test(s.output.join("")),
        5_000,
        s.output,
      );
      await checkReplaced(s, before, oldPid!, watching, () => dashboardDown);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
      await db.end();
    }
  });

  async function checkReplaced(s: Started, before: { worker_id: string }[], oldPid: number, watching: NodeJS.Timeout, dashboardDown: () => number) {
    const replacement = await until(
      "a new worker pid in the group",
      () => groupPids(s.child.pid!).find((p) => p !== oldPid && fs.existsSync(`/proc/${p}`) && fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("worker")),
      30_000,
      s.output,
    );
    await until(
      "the replacement's heartbeat",
      async () => (await liveWorkers(s.port, s.dir)).some((w) => !before.some((b) => b.worker_id === w.worker_id)),
      30_000,
      s.output,
    );
    clearInterval(watching);
    expect(replacement).not.toBe(oldPid);
    expect(dashboardDown()).toBe(0);
    expect(s.output.join("")).toMatch(/worker 1 \(pid \d+\) exited \(signal SIGKILL\); restarting it in 1 s/);
  }

  it("gives up on a worker that crashes five times within a minute, and /api/health says why", { timeout: 180_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-start-"));
    // Only the worker reads this setting, and it refuses it at startup: it exits at once, every time.
    const s = await startHookledger(dir, { HOOKLEDGER_WORKER_POLL_MS: "1" });
    const h = await until(
      "health naming the given-up worker",
      async () => {
        const r = await health(s.port);
        return r && r.status === 503 && String(r.body.reason).includes("not restarted") ? r : null;
      },
      120_000,
      s.output,
    );
    expect(h.body.reason).toBe("not restarted after repeated crashes: worker 1");
    expect(JSON.stringify(h.body.supervisor)).toMatch(/worker 1 exited 5 times within 60 s \(last: code 1\); not restarted/);
    expect(s.output.join("")).toMatch(/worker 1 exited 5 times within 60 s/);
    // The dashboard stays up.
    expect((await fetch(`http://127.0.0.1:${s.port}/login`)).status).toBe(200);
  });

  it("stops cleanly on Ctrl-C when its output pipe closes first (as `hookledger start | tee log` does: Ctrl-C ends tee too)", { timeout: 180_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-start-"));
    const s = await startHookledger(dir);
    await until("running", () => s.output.join("").includes("hookledger is running"), 120_000, s.output);
    await until("health 200", async () => (await health(s.port))?.status === 200, 60_000, s.output);
    expect(postgresPids(dir).length).toBeGreaterThan(0);
    // The reader is gone: every later write of the group to its stdout or stderr fails with EPIPE.
    s.child.stdout!.destroy();
    s.child.stderr!.destroy();
    expect(await stopAndWaitGone(s, 20_000)).toBe(0);
    expect(fs.readFileSync(path.join(dir, "postgres.log"), "utf8")).toMatch(/database system is shut down/);
  });

  it("stops on Ctrl-C (SIGINT to the group) in under 5 s with the demo running, and the next start finds the data", { timeout: 240_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-start-"));
    const s = await startHookledger(dir, { HOOKLEDGER_DEMO_RATE: "40" }, ["--demo", "--workers", "2"]);
    await until("demo running", () => s.output.join("").includes("hookledger is running"), 120_000, s.output);
    await until("health 200", async () => (await health(s.port))?.status === 200, 60_000, s.output);
    await new Promise((r) => setTimeout(r, 4_000)); // traffic under way
    const url = findRunningEmbedded(dir)!;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const events = Number((await c.query(`SELECT count(*)::int AS n FROM events`)).rows[0].n);
    const workers = (await c.query(`SELECT worker_id FROM worker_heartbeats WHERE stopped_at IS NULL`)).rows.map((r) => r.worker_id as string);
    await c.end();
    expect(workers.length).toBe(2);
    expect(events).toBeGreaterThan(0);

    const t0 = Date.now();
    await stopAndWaitGone(s, 20_000);
    const took = Date.now() - t0;
    console.log(`Ctrl-C to nothing left: ${took} ms`);
    expect(took, s.output.join("").slice(-3000)).toBeLessThan(5_000);
    // The database shut down cleanly (no crash recovery needed) and the workers marked themselves stopped.
    const log = fs.readFileSync(path.join(dir, "postgres.log"), "utf8");
    expect(log).toMatch(/database system is shut down/);

    const again = await startHookledger(dir);
    await until("health 200 again", async () => (await health(again.port))?.status === 200, 120_000, again.output);
    const c2 = new pg.Client({ connectionString: findRunningEmbedded(dir)! });
    await c2.connect();
    const after = Number((await c2.query(`SELECT count(*)::int AS n FROM events`)).rows[0].n);
    // Nor is any delivery left leased to them: each worker wrote its results and released what it had not sent.
    const stranded = Number((await c2.query(`SELECT count(*)::int AS n FROM deliveries WHERE state = 'in_flight' AND lease_owner = ANY($1)`, [workers])).rows[0].n);
    const leased = Number((await c2.query(`SELECT count(*)::int AS n FROM worker_heartbeats WHERE worker_id = ANY($1) AND stopped_at IS NULL`, [workers])).rows[0].n);
    await c2.end();
    expect(after).toBeGreaterThanOrEqual(events);
    // Every worker of the first run wrote its stop (after releasing its leases), so the database was still there for it.
    expect(leased).toBe(0);
    expect(stranded).toBe(0);
  });
});
