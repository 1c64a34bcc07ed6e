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
//   60 s. Meanwhile a probe does what the worker's result write does to the
//   tables (an attempt into the current month, its delivery's row updated, one
//   transaction) every 50 ms; its slowest write is how long the run stalled
//   a worker. Target: no stall over 1 s.
import pg from "pg";
import { round, summary } from "../lib/stats";
import type { PrismaClient } from "../../lib/db/prisma";
import { createErasure } from "../../lib/erasure/service";
import { enqueueEvents } from "../../lib/ledger/sql/enqueue";
import { eventRow } from "../../lib/events/publish";
import { runRetention } from "../../lib/retention/service";
import { SYSTEM } from "../../lib/auth/principal";

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
    return { erasure: await step("erasure", () => erasure(db, prisma, log)), retention: await step("retention", () => retention(db, prisma, o, log)) };
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

async function retention(db: pg.Pool, prisma: PrismaClient, o: ScaleLifecycleOptions, log: (m: string) => void) {
  const days = Math.floor(o.spanDays / 2);
  // The policy comes from the environment, as in the worker.
  const previous = process.env.HOOKLEDGER_RETENTION_DAYS;
  process.env.HOOKLEDGER_RETENTION_DAYS = String(days);
  try {
    return await retentionRun(db, prisma, o, days, log);
  } finally {
    if (previous === undefined) delete process.env.HOOKLEDGER_RETENTION_DAYS;
    else process.env.HOOKLEDGER_RETENTION_DAYS = previous;
  }
}

async function retentionRun(db: pg.Pool, prisma: PrismaClient, o: ScaleLifecycleOptions, days: number, log: (m: string) => void) {
  // What the run would remove, by the run's own dry run (counts only).
  const p0 = performance.now();
  const preview = await runRetention(db, prisma, { dryRun: true, trigger: "manual", actor: "bench" });
  const previewSeconds = round((performance.now() - p0) / 1000, 1);
  const expired = { deliveries: preview!.deliveries, attempts: preview!.attempts, events: preview!.events };
  // The probe's delivery: a pending one of this month (the erasure's warm-up published it beside others).
  const { rows: target } = await db.query<{ id: string; subscription_id: string }>(
    "SELECT id, subscription_id FROM deliveries WHERE state = 'pending' ORDER BY created_at DESC LIMIT 1",
  );
  if (!target[0]) throw new Error("no pending delivery for the result-write probe");
  const probeMs: number[] = [];
  let probing = true;
  const probe = (async () => {
    const c = await db.connect();
    try {
      for (let n = 1; probing; n++) {
        const t = performance.now();
        await c.query("BEGIN");
        await c.query(
          `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, error_class, worker_id)
           VALUES ($1, $2, $3, 'scheduled', now(), 20, 'retry', 503, 'http_5xx', 'bench-probe')`,
          [target[0].id, target[0].subscription_id, n],
        );
        await c.query("UPDATE deliveries SET updated_at = now(), last_attempt_at = now() WHERE id = $1", [target[0].id]);
        await c.query("COMMIT");
        probeMs.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      c.release();
    }
  })();
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), o.retentionSeconds * 1000);
  const t0 = performance.now();
  try {
    const r = await runRetention(db, prisma, { trigger: "manual", actor: "bench", signal: stop.signal });
    const seconds = (performance.now() - t0) / 1000;
    const finished = !stop.signal.aborted;
    probing = false;
    await probe;
    const p = summary(probeMs);
    const removed = { deliveries: r!.deliveries, attempts: r!.attempts, events: r!.events, partitions: r!.partitions };
    const perSecond = round((removed.deliveries + removed.attempts + removed.events) / seconds, 0);
    log(
      `dashboard10m: retention at ${days} days ${finished ? "finished" : `stopped after ${o.retentionSeconds} s`} in ${round(seconds, 1)} s: removed ${JSON.stringify(removed)} of ${JSON.stringify(expired)} (dry run ${previewSeconds} s); result-write probe p50 ${p.p50} ms, max ${p.max} ms`,
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
      resultWriteProbe: { ...p, targetMaxMs: 1000, meetsTarget: (p.max ?? 0) < 1000 },
    };
  } finally {
    clearTimeout(timer);
    probing = false;
    await probe.catch(() => {});
  }
}
