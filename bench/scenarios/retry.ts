// 4. Retry timing: scheduled retries falling due across a window while the
// worker carries fresh traffic; lateness = attempt started_at − due time.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import type { Receiver } from "../lib/proc";
import { sleep } from "../lib/proc";
import { createSubs, pollUntil, seedDeliveries } from "../lib/seed";
import { startTraffic } from "../lib/traffic";
import { startWorkers } from "../lib/workers";
import { summary } from "../lib/stats";
import { resetStatements, topStatements } from "../lib/pgstat";

export async function runRetryTiming(
  benchPg: BenchPg,
  receiver: Receiver,
  opts: { retries: number; spreadSeconds: number; freshPerSecond: number; subscriptions: number; leadInSeconds?: number },
) {
  const url = await benchPg.create("retry_timing");
  const db = new pg.Pool({ connectionString: url, max: 3 });
  db.on("error", () => {});
  const subs = Array.from({ length: opts.subscriptions }, (_, i) => `sub_${String(i + 1).padStart(2, "0")}`);
  await createSubs(
    db,
    subs.map((id) => ({ id, url: receiver.url(`ok/${id}`), tenant: id })),
  );
  await db.query("VACUUM ANALYZE");
  const workers = await startWorkers(db, url, 1);
  await resetStatements(db, benchPg.statStatements);
  const leadIn = opts.leadInSeconds ?? 3;
  const tail = Math.min(3, leadIn);
  const traffic = startTraffic(url, {
    ratePerSecond: opts.freshPerSecond,
    subs,
    prefix: "fresh_",
    maxEvents: Math.ceil(opts.freshPerSecond * (opts.spreadSeconds + leadIn + tail + 5)),
  });
  try {
    await sleep(1_000);
    // Scheduled retries (attempt 1 failed earlier), due evenly from leadIn s to leadIn + spread s from now.
    await seedDeliveries(db, {
      prefix: "retry_",
      count: opts.retries,
      subs,
      state: "scheduled",
      attemptCount: 1,
      dueOffsetSql: `make_interval(secs => ${leadIn} + ${opts.spreadSeconds} * g::float8 / ${opts.retries})`,
    });
    await sleep((leadIn + opts.spreadSeconds + tail) * 1000);
    const fresh = await traffic.stop();
    const statements = await topStatements(db, benchPg.statStatements, 6);
    const retryDone = await pollUntil(
      async () => (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'retry\\_%' AND state = 'delivered'")).rows[0].n >= opts.retries,
      20_000,
      200,
    );
    const freshDone = await pollUntil(
      async () => (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'fresh\\_%' AND state <> 'delivered'")).rows[0].n === 0,
      20_000,
      200,
    );
    const { rows: late } = await db.query(
      `SELECT extract(epoch FROM a.started_at - d.next_attempt_at) * 1000 AS ms
         FROM deliveries d JOIN attempts a ON a.delivery_id = d.id AND a.attempt_number = 2
        WHERE d.event_id LIKE 'retry\\_%'`,
    );
    const { rows: freshLat } = await db.query(
      `SELECT extract(epoch FROM d.delivered_at - d.created_at) * 1000 AS ms FROM deliveries d WHERE d.event_id LIKE 'fresh\\_%' AND d.state = 'delivered'`,
    );
    const lateness = summary(late.map((r) => Number(r.ms)));
    // When it was late: per 5 s of the window (by due time), the worst retry and the fresh traffic's p99.
    const { rows: timeline } = await db.query(
      `WITH t0 AS (SELECT min(created_at) AS t FROM deliveries WHERE event_id LIKE 'fresh\\_%')
       SELECT b.bucket, b.retry_max_ms, f.fresh_p99_ms
         FROM (SELECT floor(extract(epoch FROM d.next_attempt_at - t0.t) / 5)::int * 5 AS bucket,
                      round(max(extract(epoch FROM a.started_at - d.next_attempt_at) * 1000)) AS retry_max_ms
                 FROM deliveries d JOIN attempts a ON a.delivery_id = d.id AND a.attempt_number = 2, t0
                WHERE d.event_id LIKE 'retry\\_%' GROUP BY 1) b
         LEFT JOIN (SELECT floor(extract(epoch FROM d.created_at - t0.t) / 5)::int * 5 AS bucket,
                           round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.delivered_at - d.created_at) * 1000)) AS fresh_p99_ms
                      FROM deliveries d, t0 WHERE d.event_id LIKE 'fresh\\_%' AND d.state = 'delivered' GROUP BY 1) f USING (bucket)
        ORDER BY 1`,
    );
    return {
      worker: "one process: node bin/hookledger.mjs worker (default HOOKLEDGER_WORKER_POLL_MS 500)",
      retries: opts.retries,
      retriesAttempted: late.length,
      spreadSeconds: opts.spreadSeconds,
      completed: retryDone && freshDone,
      freshOffered: opts.freshPerSecond,
      freshPublished: fresh,
      latenessMs: lateness,
      earlyAttempts: late.filter((r) => Number(r.ms) < -1).length,
      freshPublishToDeliveredMs: summary(freshLat.map((r) => Number(r.ms))),
      topStatements: statements,
      timelineBy5s: timeline.map((r) => ({ fromSecond: r.bucket, retryMaxMs: Number(r.retry_max_ms), freshP99Ms: Number(r.fresh_p99_ms) })),
      targetP99Ms: 1000,
      p99OverTarget: lateness.p99 === null ? null : Math.round((lateness.p99 / 1000) * 100) / 100,
    };
  } finally {
    await traffic.stop().catch(() => {});
    await workers.stop();
    await db.end();
    await benchPg.drop(url);
  }
}
