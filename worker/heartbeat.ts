// The worker's heartbeat row (worker_heartbeats): /api/health answers 503 when
// no worker has beaten recently, and the dashboard lists the workers.
import os from "node:os";
import type pg from "pg";
import type { Logger } from "pino";
import { workerHeartbeat } from "../lib/metrics/worker";

async function beat(db: pg.Pool, w: { workerId: string; hostname: string; pid: number; startedAt: Date }) {
  await db.query(
    `INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (worker_id) DO UPDATE SET beat_at = now(), stopped_at = NULL`,
    [w.workerId, w.hostname, w.pid, w.startedAt],
  );
}

export async function markStopped(db: pg.Pool, workerId: string) {
  await db.query("UPDATE worker_heartbeats SET stopped_at = now(), beat_at = now() WHERE worker_id = $1", [workerId]);
}

/** One heartbeat: the row upserted and the metric set; a database away is logged, not thrown. */
export async function heartbeat(pool: pg.Pool, w: { workerId: string; startedAt: Date }, log: Logger): Promise<void> {
  try {
    await beat(pool, { workerId: w.workerId, hostname: os.hostname(), pid: process.pid, startedAt: w.startedAt });
    workerHeartbeat.set(Date.now() / 1000);
  } catch (err) {
    log.warn({ err: (err as Error).message }, "heartbeat: database unavailable");
  }
}
