// Several real worker processes (`node bin/hookledger.mjs worker`) on one
// database: exactly-once to the receiver under SKIP LOCKED, kill -9 recovery
// through the reaper, and graceful SIGTERM.
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, seedEvents, startDbRelay, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";

let db: TestDb;
let r: Receiver;
/** Per-subscription receiver delay in ms (by URL path). */
const delays = new Map<string, number>();
/** Per URL path: requests open at the receiver now, and the most ever open at once. */
const open = new Map<string, number>();
const peak = new Map<string, number>();
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  r = await startReceiver(async (req, res) => {
    const path = req.url ?? "";
    const now = (open.get(path) ?? 0) + 1;
    open.set(path, now);
    peak.set(path, Math.max(peak.get(path) ?? 0, now));
    const ms = delays.get(path) ?? 0;
    if (ms) await new Promise((x) => setTimeout(x, ms));
    open.set(path, open.get(path)! - 1);
    res.writeHead(204).end();
  });
});
// A test's slow receiver ends with it. What a test leaves due (a delivery released at shutdown) is claimed by the next
// test's worker, which would otherwise wait on it for its whole grace period (20 s of the SIGINT-then-SIGTERM test).
afterEach(() => delays.clear());
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await r?.close();
  await db?.close();
});

function spawnWorker(env: Record<string, string> = {}): ChildProcess & { output: string[] } {
  const child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "worker"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1",
      LOG_LEVEL: "warn",
      HOOKLEDGER_WORKER_POLL_MS: "100",
      HOOKLEDGER_REAP_INTERVAL_MS: "200",
      HOOKLEDGER_LEASE_SLACK_MS: "1000",
      HOOKLEDGER_HEARTBEAT_MS: "500",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  }) as ChildProcess & { output: string[] };
  child.output = [];
  const keep = (b: Buffer) => {
    child.output.push(b.toString());
    if (child.output.length > 200) child.output.shift();
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  children.push(child);
  return child;
}

const exited = (c: ChildProcess) =>
  new Promise<number | string>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve(c.exitCode ?? String(c.signalCode));
    c.once("exit", (code, sig) => resolve(code ?? String(sig)));
  });

/** Waits until each of these processes has a live heartbeat (it handles SIGTERM from then on). */
async function heartbeats(cs: ChildProcess[]) {
  return waitFor(
    async () => {
      const { rows } = await db.pool.query("SELECT worker_id FROM worker_heartbeats WHERE stopped_at IS NULL AND pid = ANY($1)", [cs.map((c) => c.pid)]);
      return rows.length === cs.length ? rows.map((x) => x.worker_id as string) : null;
    },
    60_000,
    `${cs.length} worker heartbeats`,
  );
}

async function countByState(subs: string[]) {
  const { rows } = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) GROUP BY state", [subs]);
  return Object.fromEntries(rows.map((x) => [x.state, x.n])) as Record<string, number>;
}

async function allDelivered(subs: string[], n: number, timeoutMs = 60_000) {
  await waitFor(async () => (await countByState(subs)).delivered === n, timeoutMs, `${n} deliveries delivered`);
}

/** Delivery keys of these subscriptions with how often the receiver got each. */
async function receivedCounts(subs: string[]) {
  const { rows } = await db.pool.query("SELECT delivery_key FROM deliveries WHERE subscription_id = ANY($1)", [subs]);
  return rows.map((x) => [x.delivery_key as string, r.count(x.delivery_key)] as const);
}

async function stopAll(cs: ChildProcess[]) {
  const codes = cs.map(exited);
  for (const c of cs) c.kill("SIGTERM");
  const out = await Promise.all(codes);
  out.forEach((code, i) => code !== 0 && console.error(`worker exited ${code}:\n${(cs[i] as ChildProcess & { output: string[] }).output.join("")}`));
  return out;
}

// Workers are shared along the file to keep it short: A and B serve the
// two-process test, C and D join for four, one of the four is then killed, the
// survivors are stopped with SIGTERM; E tests a grace period that runs out.
const pool: (ChildProcess & { output: string[] })[] = [];
const ENV = { HOOKLEDGER_LEASE_SLACK_MS: "3000" };

async function exactlyOnce(n: number) {
  const subs = [0, 1, 2, 3].map((i) => `sub_p${n}_${i}`);
  for (const id of subs) await createSub(db.pool, { id, url: `${r.url}/${id}`, maxConcurrency: 50 });
  while (pool.length < n) pool.push(spawnWorker(ENV));
  const ids = await heartbeats(pool);
  await seedEvents(db.pool, `evt_p${n}_`, 500, subs);
  await allDelivered(subs, 2000);
  const counts = await receivedCounts(subs);
  expect(counts).toHaveLength(2000);
  const dupes = counts.filter(([, c]) => c !== 1);
  if (dupes.length) {
    const diag = await db.pool.query(
      "SELECT d.delivery_key, a.attempt_number, a.outcome, a.error_class, a.worker_id, a.started_at, a.duration_ms FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.delivery_key = ANY($1) ORDER BY 1, 2 LIMIT 20",
      [dupes.map(([k]) => k)],
    );
    console.error(`${dupes.length} duplicates`, diag.rows);
  }
  expect(dupes).toEqual([]);
  const { rows } = await db.pool.query("SELECT worker_id, count(*)::int AS n FROM attempts WHERE subscription_id = ANY($1) GROUP BY worker_id", [subs]);
  expect(rows.reduce((a, x) => a + x.n, 0)).toBe(2000);
  for (const row of rows) expect(ids).toContain(row.worker_id);
}

describe("several worker processes on one database", () => {
  it("two processes, 2,000 deliveries: each sent exactly once, counted at the receiver", async () => {
    await exactlyOnce(2);
  });

  it("four processes, 2,000 deliveries: each sent exactly once, counted at the receiver", async () => {
    await exactlyOnce(4);
  });

  it("four processes share one subscription's max_concurrency: never more requests on the wire, with rows prefetched", async () => {
    // Each worker holds claimed rows back for its own requests to finish (lib/ledger/sql/claim.ts claimCtes);
    // held rows count as in flight for every worker's claim, so the receiver never sees more than the cap.
    const sub = "sub_p_cap";
    await createSub(db.pool, { id: sub, url: `${r.url}/${sub}`, maxConcurrency: 4 });
    delays.set(`/hooks/${sub}`, 15);
    await seedEvents(db.pool, "evt_p_cap_", 400, [sub]);
    await allDelivered([sub], 400);
    expect(peak.get(`/hooks/${sub}`)).toBeLessThanOrEqual(4);
    expect(peak.get(`/hooks/${sub}`)).toBeGreaterThanOrEqual(3);
    const counts = await receivedCounts([sub]);
    expect(counts.filter(([, c]) => c !== 1)).toEqual([]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = $1", [sub]);
    expect(rows[0].n).toBe(400);
  });

  it("kill -9 of a worker mid-batch: leases reaped, every delivery ends delivered, only the abandoned ones sent twice", async () => {
    if (pool.length < 4) while (pool.length < 4) pool.push(spawnWorker(ENV));
    await heartbeats(pool);
    const subs = [0, 1, 2, 3].map((i) => `sub_k_${i}`);
    for (const id of subs) {
      delays.set(`/hooks/${id}`, 40);
      // A reaped delivery waits out the ladder's first rung before it is sent again: 1 s here, not the default 30 s.
      await createSub(db.pool, { id, url: `${r.url}/${id}`, maxConcurrency: 40, retryPolicy: { timeoutMs: 5000, ladderSeconds: [1, 1, 1] } });
    }
    await seedEvents(db.pool, "evt_k_", 400, subs);
    // Mid-run: the victim holds leases with requests on the wire.
    const victim = await waitFor(
      async () => {
        const { rows } = await db.pool.query(
          "SELECT lease_owner, count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) AND state = 'in_flight' GROUP BY lease_owner ORDER BY n DESC",
          [subs],
        );
        const delivered = (await countByState(subs)).delivered ?? 0;
        return rows[0] && rows[0].n >= 10 && delivered >= 100 ? (rows[0].lease_owner as string) : null;
      },
      60_000,
      "a worker mid-batch",
    );
    const pid = Number(victim.split(":")[1]);
    const idx = pool.findIndex((c) => c.pid === pid);
    expect(idx).toBeGreaterThanOrEqual(0);
    const [killed] = pool.splice(idx, 1);
    killed.kill("SIGKILL");
    expect(await exited(killed)).toBe("SIGKILL");
    await allDelivered(subs, 1600, 90_000);

    const abandoned = await db.pool.query(
      "SELECT DISTINCT a.worker_id, a.error_class, a.ambiguous FROM attempts a WHERE a.subscription_id = ANY($1) AND a.outcome = 'abandoned'",
      [subs],
    );
    expect(abandoned.rows).toContainEqual({ worker_id: victim, error_class: "lease_expired", ambiguous: true });
    for (const row of abandoned.rows) expect(row.ambiguous).toBe(true);
    // Ambiguous attempts: the victim's reaped leases (and, on a starved machine, a timeout or a survivor's expired lease).
    const amb = await db.pool.query(
      "SELECT DISTINCT d.delivery_key FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE a.subscription_id = ANY($1) AND a.ambiguous",
      [subs],
    );
    const reaped = new Set(amb.rows.map((x) => x.delivery_key as string));
    const counts = await receivedCounts(subs);
    expect(counts.filter(([, c]) => c === 0)).toEqual([]); // none lost
    const twice = counts.filter(([, c]) => c > 1);
    expect(twice.filter(([k]) => !reaped.has(k))).toEqual([]); // duplicates only where the outcome was ambiguous
    const ok = await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = ANY($1) AND outcome = 'delivered'", [subs]);
    expect(ok.rows[0].n).toBe(1600);
  });

  it("SIGTERM lets in-flight requests finish within the grace period, then each process exits 0", async () => {
    if (pool.length === 0) pool.push(spawnWorker(ENV));
    await heartbeats(pool);
    delays.set("/hooks/sub_grace", 1000);
    await createSub(db.pool, { id: "sub_grace", url: `${r.url}/sub_grace`, maxConcurrency: 20 });
    await seedEvents(db.pool, "evt_g_", 20, ["sub_grace"]);
    await waitFor(async () => (await countByState(["sub_grace"])).in_flight === 20, 30_000, "20 in flight");
    const stopping = pool.splice(0);
    expect(await stopAll(stopping)).toEqual(stopping.map(() => 0));
    expect(await countByState(["sub_grace"])).toEqual({ delivered: 20 });
    const hb = await db.pool.query("SELECT count(*)::int AS n FROM worker_heartbeats WHERE stopped_at IS NULL AND pid = ANY($1)", [stopping.map((c) => c.pid)]);
    expect(hb.rows[0].n).toBe(0);
    const leased = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE state = 'in_flight'");
    expect(leased.rows[0].n).toBe(0);
  });

  it("SIGTERM releases what is still in flight when the grace period ends", async () => {
    delays.set("/hooks/sub_slowpoke", 5000);
    await createSub(db.pool, { id: "sub_slowpoke", url: `${r.url}/sub_slowpoke`, maxConcurrency: 5, retryPolicy: { timeoutMs: 10_000 } });
    const c = spawnWorker({ HOOKLEDGER_SHUTDOWN_GRACE_MS: "300" });
    await heartbeats([c]);
    await seedEvents(db.pool, "evt_s_", 5, ["sub_slowpoke"]);
    await waitFor(async () => r.received.filter((x) => x.body.includes("evt_s_")).length === 5, 30_000, "5 on the wire");
    expect(await stopAll([c])).toEqual([0]);
    expect(await countByState(["sub_slowpoke"])).toEqual({ scheduled: 5 });
    const a = await db.pool.query("SELECT outcome, error_class, ambiguous FROM attempts WHERE subscription_id = 'sub_slowpoke'");
    expect(a.rows).toHaveLength(5);
    for (const row of a.rows) expect(row).toEqual({ outcome: "abandoned", error_class: "shutdown", ambiguous: true });
  });
});

describe("Ctrl-C twice", () => {
  it("a second SIGINT ends the grace period at once: the requests on the wire are recorded as abandoned and due, and the process exits 0", async () => {
    delays.set("/hooks/sub_twice", 30_000);
    await createSub(db.pool, { id: "sub_twice", url: `${r.url}/sub_twice`, maxConcurrency: 5, retryPolicy: { timeoutMs: 60_000 } });
    const c = spawnWorker({ HOOKLEDGER_SHUTDOWN_GRACE_MS: "20000", LOG_LEVEL: "info" });
    await heartbeats([c]);
    await seedEvents(db.pool, "evt_twice_", 5, ["sub_twice"]);
    await waitFor(async () => r.received.filter((x) => x.body.includes("evt_twice_")).length === 5, 30_000, "5 on the wire");
    const code = exited(c);
    c.kill("SIGINT");
    await waitFor(async () => /stopping: waiting for in-flight requests/.test(c.output.join("")), 10_000, "the worker stopping");
    const t0 = Date.now();
    c.kill("SIGINT");
    expect(await code, c.output.join("")).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000); // not the 20 s grace period
    expect(c.output.join("")).toMatch(/stop requested again: not waiting for the requests on the wire/);
    // Nothing is left leased for the reaper to find a lease later: due again now, each attempt ambiguous.
    expect(await countByState(["sub_twice"])).toEqual({ scheduled: 5 });
    const a = await db.pool.query("SELECT outcome, error_class, ambiguous FROM attempts WHERE subscription_id = 'sub_twice'");
    expect(a.rows).toHaveLength(5);
    for (const row of a.rows) expect(row).toEqual({ outcome: "abandoned", error_class: "shutdown", ambiguous: true });
  });

  it("a SIGTERM after the SIGINT (hookledger start passing the stop on) still waits for the requests on the wire", async () => {
    delays.set("/hooks/sub_int_term", 1500);
    await createSub(db.pool, { id: "sub_int_term", url: `${r.url}/sub_int_term`, maxConcurrency: 5 });
    const c = spawnWorker({ HOOKLEDGER_SHUTDOWN_GRACE_MS: "20000" });
    await heartbeats([c]);
    await seedEvents(db.pool, "evt_int_term_", 5, ["sub_int_term"]);
    await waitFor(async () => r.received.filter((x) => x.body.includes("evt_int_term_")).length === 5, 30_000, "5 on the wire");
    const code = exited(c);
    const t0 = Date.now();
    c.kill("SIGINT");
    c.kill("SIGTERM");
    expect(await code, c.output.join("")).toBe(0);
    expect(Date.now() - t0).toBeGreaterThan(1_000); // the requests' own 1.5 s, not cut short
    expect(await countByState(["sub_int_term"])).toEqual({ delivered: 5 });
  });
});

describe("starting without the database", () => {
  /** A port nothing listens on (yet). */
  const freePort = () =>
    new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });

  it("a worker started while Postgres is unreachable waits for it, then delivers once it answers", async () => {
    const port = await freePort();
    const via = new URL(db.url);
    via.hostname = "127.0.0.1";
    via.port = String(port);
    const c = spawnWorker({ DATABASE_URL: via.toString() });
    // Startup itself (tsx compiling the CLI) can take seconds on a loaded machine: wait for the line, not a fixed time.
    await waitFor(async () => /database unavailable; waiting for it before starting/.test(c.output.join("")), 15_000, "the worker waiting");
    await waitFor(async () => (c.output.join("").match(/database unavailable; waiting for it/g) ?? []).length >= 2, 15_000, "a second retry");
    expect(c.exitCode).toBeNull(); // still there after retrying, not exited

    // The database "comes up": a TCP relay to the test database starts listening on that port.
    const relay = await startDbRelay(db.url, port);
    try {
      await createSub(db.pool, { id: "sub_late_db", url: `${r.url}/sub_late_db` });
      await seedEvents(db.pool, "evt_late_", 5, ["sub_late_db"]);
      await waitFor(async () => (await countByState(["sub_late_db"])).delivered === 5, 30_000, "5 delivered through the relay");
      expect(await stopAll([c])).toEqual([0]);
    } finally {
      await relay.cut();
    }
  });

  it("a database that refuses the password is not waited for: the worker exits 1 at once, saying why", async () => {
    const wrong = new URL(db.url);
    wrong.password = "not-the-password";
    const c = spawnWorker({ DATABASE_URL: wrong.toString() });
    expect(await exited(c)).toBe(1);
    expect(c.output.join("")).toMatch(/password authentication failed/);
    expect(c.output.join("")).not.toMatch(/waiting for it/);
  });

  it("SIGTERM while waiting for the database ends the process with 0", async () => {
    const via = new URL(db.url);
    via.hostname = "127.0.0.1";
    via.port = String(await freePort());
    const c = spawnWorker({ DATABASE_URL: via.toString() });
    await waitFor(async () => c.output.join("").includes("database unavailable"), 15_000, "the worker waiting");
    c.kill("SIGTERM");
    expect(await exited(c)).toBe(0);
  });
});
