// GET /api/health, for load balancers and uptime checks: no token needed for
// the answer itself.
//
//   200 {ok: true, db: {ok: true}, worker: {ok: true}}
//   503 {ok: false, reason, db: {ok}, worker: {ok}} when the database is
//       unreachable, a migration is pending, or no running worker has beaten
//       within HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE seconds (default 30;
//       workers beat every ~5 s), or `hookledger start` gave up restarting a
//       process that kept crashing (the reason names it; the details say
//       how it exited). The reason is otherwise one generic phrase: a raw
//       database error names hosts and users, so it is not for anyone.
//
// With `Authorization: Bearer $HOOKLEDGER_METRICS_TOKEN` (or where metrics are
// open: loopback or HOOKLEDGER_METRICS_PUBLIC=1) the answer carries the details:
// the error, the pending migrations, alive workers and the newest beat's age.
//
// `?scope=db` checks the database only: the readiness of this dashboard
// process by itself, for deployments (and the e2e harness) that start the
// dashboard before, or without, any worker.
import { getPool } from "@/lib/db/pool";
import { pendingMigrations } from "@/lib/db/migrate";
import { healthMaxHeartbeatAgeSeconds } from "@/lib/metrics/thresholds";
import { isLoopbackHost, metricsAccess } from "@/lib/metrics/token";
import { logger } from "@/lib/log";
import fs from "node:fs";

/**
 * Processes `hookledger start` stopped restarting (they kept crashing), from
 * the file it names in HOOKLEDGER_SUPERVISOR_STATUS; none when run otherwise.
 */
function supervisorGaveUp(): { process: string; reason: string; at: string }[] {
  const file = process.env.HOOKLEDGER_SUPERVISOR_STATUS;
  if (!file) return [];
  try {
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { gaveUp?: { process: string; reason: string; at: string }[] }).gaveUp ?? [];
  } catch {
    return [];
  }
}

export const dynamic = "force-dynamic";

const NO_STORE = { "cache-control": "no-store" };

export async function GET(req: Request) {
  const scope = new URL(req.url).searchParams.get("scope");
  const detailed = metricsAccess(req.headers.get("authorization"), { loopback: isLoopbackHost(process.env.HOOKLEDGER_HOST) }).ok;
  let maxAge: number;
  try {
    maxAge = healthMaxHeartbeatAgeSeconds();
  } catch (err) {
    const body = { ok: false, reason: "misconfigured", db: null, worker: null };
    return Response.json(detailed ? { ...body, error: (err as Error).message } : body, { status: 503, headers: NO_STORE });
  }
  const pool = getPool();
  let db: { ok: boolean; pendingMigrations?: string[]; error?: string };
  let worker: { ok: boolean; alive: number; newestBeatAgeSeconds: number | null; maxAgeSeconds: number } | null = null;
  try {
    const pending = await pendingMigrations(pool);
    db = pending.length ? { ok: false, pendingMigrations: pending } : { ok: true };
    const { rows } = await pool.query<{ age: number | null; alive: number }>(
      `SELECT EXTRACT(EPOCH FROM now() - max(beat_at))::float8 AS age,
              count(*) FILTER (WHERE beat_at > now() - make_interval(secs => $1))::int AS alive
       FROM worker_heartbeats WHERE stopped_at IS NULL`,
      [maxAge],
    );
    const age = rows[0].age === null ? null : Math.max(0, Math.round(Number(rows[0].age) * 10) / 10);
    worker = { ok: age !== null && age <= maxAge, alive: rows[0].alive, newestBeatAgeSeconds: age, maxAgeSeconds: maxAge };
  } catch (err) {
    db = { ok: false, error: (err as Error).message };
    logger.warn({ err: db.error }, "health: database check failed");
  }
  const gaveUp = scope === "db" ? [] : supervisorGaveUp();
  const ok = db.ok && (scope === "db" || ((worker?.ok ?? false) && gaveUp.length === 0));
  const reason = ok
    ? undefined
    : gaveUp.length
      ? `not restarted after repeated crashes: ${gaveUp.map((g) => g.process).join(", ")}`
      : db.error
        ? "database unavailable"
        : db.pendingMigrations
          ? "migrations pending"
          : "no worker heartbeat";
  const supervisor = gaveUp.length ? { gaveUp } : undefined;
  const body = detailed ? { ok, reason, db, worker, supervisor } : { ok, reason, db: { ok: db.ok }, worker: worker ? { ok: worker.ok } : null };
  return Response.json(body, { status: ok ? 200 : 503, headers: NO_STORE });
}
