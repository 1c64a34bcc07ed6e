// The lifecycle figures on the dashboard10m ledger (run after its
// queries, before the database is dropped):
//
// - erasure: one student's 1,000 events, published through the ledger's
//   enqueue into the seeded district (2 deliveries each, pending), erased by
//   lib/erasure's createErasure (the service behind POST /api/v1/erasures and
//   `hookledger erase`). Target: under 2 s.
// - retention: lib/retention's runRetention with a policy that expires the
//   older half of the six months (HOOKLEDGER_RETENTION_DAYS = span / 2), as
//   the daily run or `hookledger retention run` runs it, bounded by
//   `retentionSeconds` (stopped between batches, as the worker's shutdown
//   stops it; what committed stays counted). Target: three months in under
//   60 s. Meanwhile the real worker drains an event published every 50 ms
//   (startDrainProbe); the latest of those deliveries is how long the run
//   stalled the drain. Target: no delivery over 1 s late.
import pg from "pg";
import { round, summary } from "../lib/stats";
import type { PrismaClient } from "../../lib/db/prisma";
import { createErasure } from "../../lib/erasure/create-erasure";
import { enqueueEvents } from "../../lib/ledger/sql/enqueue";
import { eventRow } from "../../lib/events/publish";
import { runRetention } from "../../lib/retention/run-retention";
import { SYSTEM } from "../../lib/auth/principal";
import { DeliveryWorker } from "../../worker/worker";
import { createSubs, pollUntil } from "../lib/seed";

export type ScaleLifecycleOptions = { spanDays: number; retentionSeconds: number };

export async function runScaleLifecycle(url: string, prisma: PrismaClient, o: ScaleLifecycleOptions, log: (m: string) => void) {
  const db = new pg.Pool({ connectionString: url, max: 4, statement_timeout: 60_000 });
  db.on("error", () => {});
  try {
    // Each on its own: a failed erasure still leaves the retention run to measure.
    const step = async <T>(name: string, fn: () => Promise<T>): Promise<T | { error: string }> => {
      try {
        return await fn();
      } catch (err) {
        const error = (err as Error).message.split("\n").filter(Boolean).slice(-1)[0]?.slice(0, 300) ?? String(err);
        log(`dashboard10m: ${name} failed: ${error}`);
        return { error };
      }
    };
    return { erasure: await step("erasure", () => erasure(db, prisma, log)), retention: await step("retention", () => retention(db, url, prisma, o, log)) };
  } finally {
    await db.end().catch(() => {});
  }
}

async function erasure(db: pg.Pool, prisma: PrismaClient, log: (m: string) => void) {
  const tenant = "dist_001";
  const event = (i: number, studentId: string) =>
    eventRow({
      id: `evt_bench_${studentId}_${i}`,
      type: "assignment.graded",
      subject: { tenant, studentId, assignmentId: `asg_${i % 40}` },
      data: { studentId, grade: "B+", score: 87, comment: `comment ${i}`, term: "2026-fall" },
    });
  const rows = Array.from({ length: 1_000 }, (_, i) => event(i, "stu_bench_881"));
  for (let i = 0; i < rows.length; i += 500) await enqueueEvents(db, rows.slice(i, i + 500));
  await enqueueEvents(db, [event(0, "stu_bench_warm")]);
  // A warm-up first, so the timed call measures the erasure, not Prisma's first connection.
  await createErasure(prisma, { subject: { studentId: "stu_bench_warm" }, tenant, reason: "bench: warm-up" }, SYSTEM);
  const t0 = performance.now();
  const r = await createErasure(prisma, { subject: { studentId: "stu_bench_881" }, tenant, reason: "bench: records request" }, SYSTEM);
  const seconds = (performance.now() - t0) / 1000;
  const { rows: left } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE tenant = $1 AND subject_values @> ARRAY['stu_bench_881']", [tenant]);
  if (r.events !== 1_000 || left[0].n !== 0) throw new Error(`erasure tombstoned ${r.events} of 1,000 events (${left[0].n} still searchable)`);
  log(`dashboard10m: erased one student's 1,000 events (${r.deliveries} deliveries) in ${round(seconds, 2)} s`);
  return { events: r.events, deliveries: r.deliveries, seconds: round(seconds, 2), targetSeconds: 2, meetsTarget: seconds < 2 };
}

async function retention(db: pg.Pool, url: string, prisma: PrismaClient, o: ScaleLifecycleOptions, log: (m: string) => void) {
  const days = Math.floor(o.spanDays / 2);
  // The policy comes from the environment, as in the worker.
  const previous = process.env.HOOKLEDGER_RETENTION_DAYS;
  process.env.HOOKLEDGER_RETENTION_DAYS = String(days);
  try {
    return await retentionRun(db, url, prisma, o, days, log);
  } finally {
    if (previous === undefined) delete process.env.HOOKLEDGER_RETENTION_DAYS;
    else process.env.HOOKLEDGER_RETENTION_DAYS = previous;
  }
}

async function retentionRun(db: pg.Pool, url: string, prisma: PrismaClient, o: ScaleLifecycleOptions, days: number, log: (m: string) => void) {
  // What the run would remove, by the run's own dry run (counts only).
  const p0 = performance.now();
  const preview = await runRetention(db, prisma, { dryRun: true, trigger: "manual", actor: "bench" });
  const previewSeconds = round((performance.now() - p0) / 1000, 1);
  const expired = { deliveries: preview!.deliveries, attempts: preview!.attempts, events: preview!.events };
  const probe = await startDrainProbe(db, url);
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), o.retentionSeconds * 1000);
  const t0 = performance.now();
  try {
    const r = await runRetention(db, prisma, { trigger: "manual", actor: "bench", signal: stop.signal });
    const seconds = (performance.now() - t0) / 1000;
    const finished = !stop.signal.aborted;
    const p = summary(await probe.stop());
    const removed = { deliveries: r!.deliveries, attempts: r!.attempts, events: r!.events, partitions: r!.partitions };
    const perSecond = round((removed.deliveries + removed.attempts + removed.events) / seconds, 0);
    log(
      `dashboard10m: retention at ${days} days ${finished ? "finished" : `stopped after ${o.retentionSeconds} s`} in ${round(seconds, 1)} s: removed ${JSON.stringify(removed)} of ${JSON.stringify(expired)} (dry run ${previewSeconds} s); drain lateness p50 ${p.p50} ms, max ${p.max} ms (${p.n} deliveries)`,
    );
    return {
      retentionDays: days,
      expired,
      previewSeconds,
      removed,
      finished,
      seconds: round(seconds, 1),
      rowsPerSecond: perSecond,
      targetSeconds: 60,
      meetsTarget: finished && seconds < 60,
      drainLateness: { ...p, targetMaxMs: 1000, meetsTarget: (p.max ?? 0) < 1000 },
    };
  } finally {
    clearTimeout(timer);
    await probe.stop().catch(() => {});
  }
}

/**
 * The drain during the run: the real DeliveryWorker in this process (its
 * sender answering 204 at once, as in bench/db-drain.ts, so the lateness is
 * the ledger's, not a network's), delivering an event published every 50 ms
 * to a subscription of its own; every other subscription is paused, so the
 * worker sends nothing else. It is warmed up with one delivery before the
 * run. `stop` returns each delivery's lateness (delivered_at - created_at) in
 * ms.
 */
async function startDrainProbe(db: pg.Pool, url: string) {
  await db.query("UPDATE subscriptions SET state = 'paused' WHERE state = 'active'");
  await db.query("DELETE FROM subscriptions WHERE id = 'sub_bench_probe'");
  await createSubs(db, [{ id: "sub_bench_probe", url: "http://127.0.0.1:9/probe", eventTypes: ["bench.probe"], maxConcurrency: 20 }]);
  const worker = new DeliveryWorker({ databaseUrl: url, allowPrivateTargets: true, handleSignals: false });
  (worker.sender as { send: unknown }).send = async () => ({
    outcome: "response",
    statusCode: 204,
    errorClass: null,
    errorMessage: null,
    retryAfter: null,
    durationMs: 1,
    responseExcerpt: null,
    responseHeaders: null,
    ambiguous: false,
  });
  worker.start();
  // Warmed up first (its LISTEN connection, its first claim, the subscription's secret): a cold start is not a stall.
  await enqueueEvents(db, [eventRow({ id: "evt_bench_probe_warm", type: "bench.probe", data: { n: 0 } })]);
  await pollUntil(async () => (await db.query("SELECT 1 FROM deliveries WHERE event_id = 'evt_bench_probe_warm' AND state = 'delivered'")).rowCount === 1, 30_000);
  let publishing = true;
  const published = (async () => {
    for (let n = 1; publishing; n++) {
      await enqueueEvents(db, [eventRow({ id: `evt_bench_probe_${n}`, type: "bench.probe", data: { n } })]);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let stopped: Promise<number[]> | null = null;
  return {
    stop: () =>
      (stopped ??= (async () => {
        publishing = false;
        await published;
        // Every probe event delivered (within a minute), then the worker stopped.
        await pollUntil(
          async () => (await db.query("SELECT 1 FROM deliveries WHERE subscription_id = 'sub_bench_probe' AND state <> 'delivered' LIMIT 1")).rowCount === 0,
          60_000,
        );
        await worker.stop();
        const { rows } = await db.query<{ ms: number }>(
          "SELECT (EXTRACT(EPOCH FROM coalesce(delivered_at, now()) - created_at) * 1000)::float8 AS ms FROM deliveries WHERE subscription_id = 'sub_bench_probe' AND event_id <> 'evt_bench_probe_warm'",
        );
        return rows.map((r) => r.ms);
      })()),
  };
}
