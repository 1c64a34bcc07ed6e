// Poison rows stop: a reaped lease (the worker died mid-send) is an attempt
// against the budget, retried after the policy's backoff (the same nextAttempt
// as a failed send), and past the budget the delivery is dead-lettered as
// `abandoned`. The end-to-end case uses real worker processes and a receiver
// whose every request makes the test SIGKILL the worker that sent it.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, seedEvents, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { abandonLeases } from "../../lib/ledger/sql/abandon-leases";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { nextAttempt } from "../../lib/ledger/backoff";
import { parseRetryPolicy } from "../../lib/ledger/retry-policy";
import { ZRetryPolicy } from "../../lib/subscriptions/subscription-input";

let db: TestDb;
let r: Receiver;
let current: ChildProcess | null = null;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  r = await startReceiver(async (req) => {
    // The worker that sent this dies before any answer: its lease is all that is left.
    if (req.url?.endsWith("/poison")) current?.kill("SIGKILL");
    await new Promise((x) => setTimeout(x, 200));
    req.socket.destroy();
  });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await r?.close().catch(() => {});
  await db?.close();
});

function spawnWorker(): ChildProcess {
  const child = spawn(process.execPath, [path.resolve("bin/hookledger.mjs"), "worker"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1",
      LOG_LEVEL: "warn",
      HOOKLEDGER_WORKER_POLL_MS: "100",
      HOOKLEDGER_REAP_INTERVAL_MS: "200",
      HOOKLEDGER_LEASE_SLACK_MS: "500",
      HOOKLEDGER_HEARTBEAT_MS: "500",
    },
    stdio: ["ignore", "ignore", "ignore"],
  });
  children.push(child);
  return child;
}

describe("the reaper", () => {
  it("schedules a reaped row by the policy's backoff, not at once, and dead-letters it as abandoned past maxAttempts", async () => {
    await createSub(db.pool, { id: "sub_reap", url: "http://127.0.0.1:9/never", retryPolicy: { ladderSeconds: [30, 120], maxAttempts: 2 } });
    await seedEvents(db.pool, "evt_reap", 1, ["sub_reap"]);
    const claimOpts = { owner: "w1", limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [] };
    const [row] = await claimDeliveries(db.pool, claimOpts);
    expect(row).toBeDefined();
    await db.pool.query("UPDATE deliveries SET lease_until = now() - interval '1 second' WHERE id = $1", [row.id]);
    const now = new Date();
    expect((await abandonLeases(db.pool, { errorClass: "lease_expired", now, random: () => 0.5 })).map((x) => x.id)).toEqual([row.id]);
    const first = (await db.pool.query("SELECT state, attempt_count, next_attempt_at, run_started_at FROM deliveries WHERE id = $1", [row.id])).rows[0];
    const expected = nextAttempt({
      attemptNumber: 1,
      runStartedAt: first.run_started_at,
      now,
      policy: parseRetryPolicy({ ladderSeconds: [30, 120], maxAttempts: 2 }),
      random: () => 0.5,
    });
    expect(expected.kind).toBe("retry");
    expect(first).toMatchObject({ state: "scheduled", attempt_count: 1 });
    expect(first.next_attempt_at.getTime()).toBe((expected as { at: Date }).at.getTime());

    // Due again, claimed, reaped again: the budget of 2 is spent.
    await db.pool.query("UPDATE deliveries SET next_attempt_at = now() WHERE id = $1", [row.id]);
    const [again] = await claimDeliveries(db.pool, claimOpts);
    expect(again.id).toBe(row.id);
    await db.pool.query("UPDATE deliveries SET lease_until = now() - interval '1 second' WHERE id = $1", [row.id]);
    await abandonLeases(db.pool, { errorClass: "lease_expired" });
    const end = (await db.pool.query("SELECT state, dead_letter_reason, attempt_count, dead_lettered_at FROM deliveries WHERE id = $1", [row.id])).rows[0];
    expect(end).toMatchObject({ state: "dead_letter", dead_letter_reason: "abandoned", attempt_count: 2 });
    expect(end.dead_lettered_at).not.toBeNull();
    const attempts = await db.pool.query("SELECT attempt_number, outcome, ambiguous FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number", [row.id]);
    expect(attempts.rows).toEqual([
      { attempt_number: 1, outcome: "abandoned", ambiguous: true },
      { attempt_number: 2, outcome: "abandoned", ambiguous: true },
    ]);
  });

  it("the subscription API accepts maxAttempts and refuses nonsense", () => {
    expect(ZRetryPolicy.parse({ maxAttempts: 3 })).toEqual({ maxAttempts: 3 });
    expect(ZRetryPolicy.safeParse({ maxAttempts: 0 }).success).toBe(false);
    expect(ZRetryPolicy.safeParse({ maxAttempts: 1.5 }).success).toBe(false);
  });
});

describe("a row that kills its worker", () => {
  it("ends dead_letter / abandoned after the budget, every attempt recorded, with real worker processes", async () => {
    await createSub(db.pool, { id: "sub_poison", url: `${r.url}/poison`, retryPolicy: { ladderSeconds: [0], maxAttempts: 3, timeoutMs: 500 } });
    await seedEvents(db.pool, "evt_poison", 1, ["sub_poison"]);
    const end = await waitFor(
      async () => {
        if (!current || current.exitCode !== null || current.signalCode !== null) current = spawnWorker();
        const { rows } = await db.pool.query("SELECT id, state, dead_letter_reason, attempt_count FROM deliveries WHERE subscription_id = 'sub_poison'");
        return rows[0]?.state === "dead_letter" ? rows[0] : null;
      },
      90_000,
      "the poison row dead-lettered",
    );
    expect(end).toMatchObject({ dead_letter_reason: "abandoned", attempt_count: 3 });
    const { rows } = await db.pool.query("SELECT attempt_number, outcome, error_class FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number", [end.id]);
    expect(rows).toEqual([1, 2, 3].map((n) => ({ attempt_number: n, outcome: "abandoned", error_class: "lease_expired" })));
    expect(r.received.filter((x) => x.headers["webhook-id"] === r.received[0].headers["webhook-id"])).toHaveLength(3);
  }, 120_000);
});
