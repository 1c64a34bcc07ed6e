// 6. Redrive pacing: a bulk redrive created with lib/redrive's
// createRedriveBatch and moved by the worker's pacer (worker/redrive-pacer.ts)
// at a set rate, while fresh traffic flows at a fixed offered rate. Measures
// the achieved redrive rate and fresh traffic's throughput and latency before
// and during the redrive.
//
// 6b. Recover pacing (kind "recover"): the same measurement for a recover of a
// window of delivered rows (lib/recover/recover-and-backfill.ts createRecoverBatch), each
// sent again as a resend, while the same fresh traffic flows.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import type { Receiver } from "../lib/proc";
import { sleep } from "../lib/proc";
import { createSubs, pollUntil, seedDeliveries } from "../lib/seed";
import { startTraffic } from "../lib/traffic";
import { startWorkers } from "../lib/workers";
import { round, summary } from "../lib/stats";
import { createPrisma } from "../../lib/db/prisma";
import { createRedriveBatch } from "../../lib/redrive/redrive-batches";
import { createRecoverBatch } from "../../lib/recover/recover-and-backfill";
import { startRedrivePacer } from "../../worker/redrive-pacer";
import { SYSTEM } from "../../lib/auth/principal";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../lib/proc";

/** Whether `hookledger worker` runs the redrive pacer itself (worker/main.ts companions). */
function workerRunsPacer(): boolean {
  const src = fs.readFileSync(path.join(ROOT, "worker", "main.ts"), "utf8");
  return /^\s*companions\.push\(.*startRedrivePacer\(/m.test(src);
}

export async function runRedrivePacing(
  benchPg: BenchPg,
  receiver: Receiver,
  opts: { deadLetters: number; ratePerSecond: number; freshPerSecond: number; baselineSeconds: number; subscriptions: number; kind?: "redrive" | "recover" },
) {
  const kind = opts.kind ?? "redrive";
  // The trigger the worker records on an attempt the batch caused.
  const sentTrigger = kind === "recover" ? "resend" : "redrive";
  const url = await benchPg.create(kind);
  const db = new pg.Pool({ connectionString: url, max: 3 });
  db.on("error", () => {});
  const prisma = createPrisma(url);
  const subs = Array.from({ length: opts.subscriptions }, (_, i) => `sub_${String(i + 1).padStart(2, "0")}`);
  await createSubs(
    db,
    [...subs, "sub_fixed"].map((id) => ({ id, url: receiver.url(`ok/${id}`), tenant: id })),
  );
  const windowStart = new Date(Date.now() - 1000).toISOString();
  if (kind === "redrive") await seedDeliveries(db, { prefix: "dead_", count: opts.deadLetters, subs: ["sub_fixed"], state: "dead_letter", attemptCount: 7 });
  else await seedDeliveries(db, { prefix: "lost_", count: opts.deadLetters, subs: ["sub_fixed"] }); // delivered by the worker below, then lost by the district
  const windowEnd = new Date().toISOString();
  const workers = await startWorkers(db, url, 1);
  if (kind === "recover")
    await pollUntil(
      async () => (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_fixed' AND state = 'delivered'")).rows[0].n >= opts.deadLetters,
      120_000,
      200,
    );
  await db.query("VACUUM ANALYZE");
  // The worker's own pacer when it runs one; otherwise the same pacer in the bench process.
  const inWorker = workerRunsPacer();
  const pacer = inWorker ? null : startRedrivePacer({ databaseUrl: url });
  const redriveSeconds = opts.deadLetters / opts.ratePerSecond;
  const traffic = startTraffic(url, {
    ratePerSecond: opts.freshPerSecond,
    subs,
    prefix: "fresh_",
    maxEvents: Math.ceil(opts.freshPerSecond * (opts.baselineSeconds + redriveSeconds + 10)),
  });
  // Fresh traffic in [from, to): deliveries completed per second (by delivered_at), and how long those created in the window took.
  const window = async (from: Date, to: Date) => {
    const { rows } = await db.query(
      `SELECT (SELECT count(*)::int FROM deliveries WHERE event_id LIKE 'fresh\\_%' AND delivered_at >= $1 AND delivered_at < $2) AS delivered,
              (SELECT count(*)::int FROM deliveries WHERE event_id LIKE 'fresh\\_%' AND created_at >= $1 AND created_at < $2) AS published,
              (SELECT array_agg(extract(epoch FROM delivered_at - created_at) * 1000) FROM deliveries
                WHERE event_id LIKE 'fresh\\_%' AND created_at >= $1 AND created_at < $2 AND state = 'delivered') AS lat`,
      [from, to],
    );
    const s = (to.getTime() - from.getTime()) / 1000;
    return {
      seconds: round(s, 1),
      publishedPerSecond: round(rows[0].published / s),
      deliveredPerSecond: round(rows[0].delivered / s),
      publishToDeliveredMs: summary((rows[0].lat ?? []).map(Number)),
    };
  };
  try {
    await sleep(1_000); // let the worker settle into the fresh flow
    const a0 = new Date();
    await sleep(opts.baselineSeconds * 1000);
    const a1 = new Date();
    const batch =
      kind === "recover"
        ? await createRecoverBatch(
            prisma,
            "sub_fixed",
            { since: windowStart, until: windowEnd, reason: "BENCH-2 district lost a day", ratePerSecond: opts.ratePerSecond },
            { ...SYSTEM, actor: "bench" },
          )
        : await createRedriveBatch(
            prisma,
            { filter: { subscriptionId: "sub_fixed" }, reason: "BENCH-1 district fixed its importer", ratePerSecond: opts.ratePerSecond, latestStateWins: false },
            { ...SYSTEM, actor: "bench" },
          );
    const b0 = new Date(batch.createdAt);
    const finished = await pollUntil(
      async () => (await db.query("SELECT status FROM redrive_batches WHERE id = $1", [batch.id])).rows[0].status === "done",
      redriveSeconds * 1000 * 2 + 20_000,
      200,
    );
    const b1 = new Date();
    await sleep(1_000);
    const fresh = await traffic.stop();
    const redrivenDelivered = await pollUntil(
      async () =>
        (await db.query("SELECT count(*)::int AS n FROM attempts WHERE subscription_id = 'sub_fixed' AND trigger = $1 AND outcome = 'delivered'", [sentTrigger])).rows[0]
          .n >= opts.deadLetters,
      20_000,
      200,
    );
    await pollUntil(
      async () => (await db.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'fresh\\_%' AND state <> 'delivered'")).rows[0].n === 0,
      20_000,
      200,
    );
    const { rows: br } = await db.query(
      `SELECT b.matched, b.redriven, b.skipped, b.rate_per_second, b.created_at, b.finished_at,
              (SELECT min(processed_at) FROM redrive_batch_items WHERE batch_id = b.id) AS first_item,
              (SELECT max(processed_at) FROM redrive_batch_items WHERE batch_id = b.id) AS last_item,
              (SELECT count(*)::int FROM redrive_batch_items WHERE batch_id = b.id
                  AND processed_at > (SELECT min(processed_at) FROM redrive_batch_items WHERE batch_id = b.id)) AS after_first_step,
              (SELECT min(a.started_at) FROM attempts a WHERE a.subscription_id = 'sub_fixed' AND a.trigger = $2) AS first_sent,
              (SELECT max(a.started_at) FROM attempts a WHERE a.subscription_id = 'sub_fixed' AND a.trigger = $2) AS last_sent,
              (SELECT count(*)::int FROM attempts a WHERE a.subscription_id = 'sub_fixed' AND a.trigger = $2) AS sent
         FROM redrive_batches b WHERE b.id = $1`,
      [batch.id, sentTrigger],
    );
    const b = br[0];
    const pacedSeconds = (b.finished_at.getTime() - b.created_at.getTime()) / 1000;
    // Steady-state rate: the items moved after the pacer's first step, over the time from that step to its last.
    const stepSpan = (b.last_item.getTime() - b.first_item.getTime()) / 1000;
    const overall = b.redriven / pacedSeconds;
    // A batch moved in one step (tiny sizes, or a late tick) has no span: its overall rate is the answer.
    const achieved = stepSpan > 0 && b.after_first_step > 0 ? b.after_first_step / stepSpan : overall;
    const sentRate = (b.sent - 1) / ((b.last_sent.getTime() - b.first_sent.getTime()) / 1000);
    const before = await window(a0, a1);
    const during = await window(b0, b1);
    return {
      kind,
      worker: inWorker
        ? "one process: node bin/hookledger.mjs worker, which runs the pacer (worker/redrive-pacer.ts, 200 ms tick) itself"
        : "one process: node bin/hookledger.mjs worker; the pacer (worker/redrive-pacer.ts, 200 ms tick) runs in the bench process, because runWorker does not start it",
      completed: finished && redrivenDelivered,
      deadLetters: opts.deadLetters,
      setRatePerSecond: opts.ratePerSecond,
      batch: { matched: b.matched, redriven: b.redriven, skipped: b.skipped, seconds: round(pacedSeconds, 2) },
      achievedRatePerSecond: round(achieved, 1),
      achievedHow: "items moved after the pacer's first step / (last step − first step), from redrive_batch_items.processed_at",
      overallRatePerSecond: round(overall, 1),
      achievedOverSet: round(achieved / opts.ratePerSecond, 3),
      redrivenSentPerSecond: round(sentRate, 1),
      freshOfferedPerSecond: opts.freshPerSecond,
      freshPublished: fresh,
      freshBefore: before,
      freshDuring: during,
      freshDuringOverBefore: round(during.deliveredPerSecond / before.deliveredPerSecond, 3),
    };
  } finally {
    await traffic.stop().catch(() => {});
    await pacer?.stop();
    await workers.stop();
    await prisma.$disconnect();
    await db.end();
    await benchPg.drop(url);
  }
}
