// 2. Drain: a published backlog, then N real worker processes; deliveries per
// second from the first attempt to the last delivered row. Every attempt row
// written, synchronous_commit as configured (on).
// 3. Baseline: the cron sweep this replaces, on the same backlog.
import pg from "pg";
import { Agent } from "undici";
import type { BenchPg } from "../lib/pg";
import type { Receiver } from "../lib/proc";
import { createSubs, countState, pollUntil, seedDeliveries } from "../lib/seed";
import { startWorkers } from "../lib/workers";
import { wakeWorkers } from "../../lib/ledger/sql/enqueue";
import { resetStatements, topStatements } from "../lib/pgstat";
import { round } from "../lib/stats";
import { profileOf } from "../lib/cpuprofile";
import { cpuMeter } from "../lib/cpu";
import { signatureHeader } from "../../lib/signing/standard-webhooks";
import { openSecret } from "../../lib/subscriptions/secrets";

export type DrainOpts = {
  deliveries: number;
  subscriptions: number;
  workers: number;
  timeoutMs: number;
  cpuProfDir?: string;
  label: string;
  maxConcurrency?: number;
  workerEnv?: Record<string, string | undefined>;
};

async function seedBacklog(
  benchPg: BenchPg,
  receiver: Receiver,
  opts: { name: string; deliveries: number; subscriptions: number; state: "active" | "paused"; maxConcurrency?: number },
) {
  const url = await benchPg.create(opts.name);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  db.on("error", () => {});
  const subs = Array.from({ length: opts.subscriptions }, (_, i) => `sub_${String(i + 1).padStart(2, "0")}`);
  await createSubs(
    db,
    subs.map((id) => ({ id, url: receiver.url(`ok/${id}`), state: opts.state, tenant: id, maxConcurrency: opts.maxConcurrency })),
  );
  await seedDeliveries(db, { prefix: "evt_", count: opts.deliveries, subs, payloadBytes: 1024 });
  await db.query("VACUUM ANALYZE");
  await db.query("CHECKPOINT").catch(() => {});
  return { url, db, subs };
}

export async function runDrain(benchPg: BenchPg, receiver: Receiver, opts: DrainOpts) {
  const { url, db, subs } = await seedBacklog(benchPg, receiver, {
    name: `drain_${opts.label}`,
    deliveries: opts.deliveries,
    subscriptions: opts.subscriptions,
    state: "paused",
    maxConcurrency: opts.maxConcurrency,
  });
  const payload = (await db.query("SELECT avg(octet_length(payload))::int AS b FROM events")).rows[0].b as number;
  const before = (await receiver.stats()).total;
  // Workers first, on paused subscriptions, so that every process is up when the
  // backlog opens: no process gets a head start.
  const workers = await startWorkers(db, url, opts.workers, { cpuProfDir: opts.cpuProfDir, env: opts.workerEnv });
  let done = false;
  let result: Record<string, unknown> | undefined;
  try {
    await resetStatements(db, benchPg.statStatements);
    const meter = cpuMeter({ workers: workers.children.map((c) => c.pid), receiver: [receiver.child.pid], bench: [process.pid] }, benchPg.postmasterPid());
    const t0 = (await db.query("UPDATE subscriptions SET state = 'active' RETURNING clock_timestamp() AS t")).rows[0].t as Date;
    await wakeWorkers(db); // fixtures do not NOTIFY
    done = await pollUntil(async () => (await countState(db, "delivered")) >= opts.deliveries, opts.timeoutMs, 100);
    const cpu = meter();
    const statements = await topStatements(db, benchPg.statStatements);
    const peak = workers.peakRssMb();
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM attempts) AS attempts,
              (SELECT count(*)::int FROM deliveries WHERE state = 'delivered') AS delivered,
              (SELECT min(started_at) FROM attempts) AS first_attempt,
              (SELECT max(delivered_at) FROM deliveries) AS last_delivered,
              (SELECT count(DISTINCT worker_id)::int FROM attempts) AS workers_seen,
              (SELECT current_setting('synchronous_commit')) AS sync`,
    );
    const r = rows[0];
    const seconds = (r.last_delivered.getTime() - r.first_attempt.getTime()) / 1000;
    const fromOpen = (r.last_delivered.getTime() - t0.getTime()) / 1000;
    const received = (await receiver.stats()).total - before;
    result = {
      workers: opts.workers,
      mode: "separate processes: node bin/hookledger.mjs worker",
      deliveries: opts.deliveries,
      subscriptions: subs.length,
      maxConcurrencyPerSubscription: opts.maxConcurrency ?? 10,
      workerEnv: opts.workerEnv ?? {},
      payloadBytes: payload,
      completed: done,
      delivered: r.delivered,
      attemptRows: r.attempts,
      requestsReceived: received,
      workersThatDelivered: r.workers_seen,
      synchronousCommit: r.sync,
      seconds: round(seconds, 2),
      perSecond: round(r.delivered / seconds),
      perSecondFromOpen: round(r.delivered / fromOpen),
      peakRssMb: peak,
      cpuDuringDrain: cpu,
      topStatements: statements,
    };
  } finally {
    await workers.stop();
    await db.end();
    await benchPg.drop(url);
  }
  // The drain and the worker's shutdown, not its start-up (module loading).
  if (opts.cpuProfDir) result.cpuProfile = profileOf(opts.cpuProfDir, workers.children[0].pid, 12, Math.ceil(Number(result.seconds) + 2));
  return result;
}

/**
 * The cron-sweep design hookledger replaces: one process selects pending rows,
 * POSTs them one at a time (awaiting each), and updates each row with its own
 * statement. Given a keep-alive agent and signing, and no attempt rows (which
 * flatters it). Time-boxed; its rate is extrapolated to the whole backlog.
 */
export async function runCronSweep(benchPg: BenchPg, receiver: Receiver, opts: { deliveries: number; subscriptions: number; seconds: number }) {
  const { url, db } = await seedBacklog(benchPg, receiver, { name: "cron_sweep", deliveries: opts.deliveries, subscriptions: opts.subscriptions, state: "active" });
  const agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const secrets = new Map<string, string>();
  for (const s of (await client.query("SELECT id, subscription_id, secret FROM subscription_secrets")).rows)
    secrets.set(s.subscription_id, openSecret(s.secret, { id: s.id, subscriptionId: s.subscription_id }));
  let sent = 0;
  const t = performance.now();
  const end = t + opts.seconds * 1000;
  try {
    sweep: while (performance.now() < end) {
      // The sweep: scan for pending rows, oldest first.
      const { rows } = await client.query(
        `SELECT d.id, d.delivery_key, d.subscription_id, s.url, e.payload FROM deliveries d
           JOIN subscriptions s ON s.id = d.subscription_id JOIN events e ON e.id = d.event_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= now() ORDER BY d.next_attempt_at LIMIT 100`,
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        if (performance.now() >= end) break sweep;
        const u = new URL(row.url);
        const ts = Math.floor(Date.now() / 1000);
        const started = new Date();
        const res = await agent.request({
          origin: u.origin,
          path: u.pathname,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": row.delivery_key,
            "webhook-timestamp": String(ts),
            "webhook-signature": signatureHeader([secrets.get(row.subscription_id)!], row.delivery_key, ts, row.payload),
          },
          body: row.payload,
        });
        await res.body.dump();
        await client.query(
          `UPDATE deliveries SET state = $2, attempt_count = attempt_count + 1, total_attempts = total_attempts + 1,
                  last_attempt_at = $3, last_status_code = $4, delivered_at = CASE WHEN $2 = 'delivered' THEN now() END, updated_at = now()
            WHERE id = $1`,
          [row.id, res.statusCode < 300 ? "delivered" : "scheduled", started, res.statusCode],
        );
        sent++;
      }
    }
    const seconds = (performance.now() - t) / 1000;
    const rate = sent / seconds;
    return {
      mode: "in the bench process: SELECT 100 pending, then for each: POST (awaited), UPDATE (own statement)",
      timeBoxSeconds: opts.seconds,
      sent,
      seconds: round(seconds, 2),
      perSecond: round(rate),
      extrapolatedSecondsForBacklog: round(opts.deliveries / rate, 1),
    };
  } finally {
    await client.end();
    await agent.close();
    await db.end();
    await benchPg.drop(url);
  }
}
