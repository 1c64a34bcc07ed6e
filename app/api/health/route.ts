// GET /api/health: no token (INTERFACES.md), for load balancers and uptime checks.
//
//   200 {db: {ok: true}, worker: {ok: true, alive, newestBeatAgeSeconds, maxAgeSeconds}}
//   503 when the database is unreachable, a migration is pending, or no
//       running worker has beaten within HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE
//       seconds (default 30; workers beat every ~5 s).
//
// `?scope=db` checks the database only: the readiness of this dashboard
// process by itself, for deployments (and the e2e harness) that start the
// dashboard before, or without, any worker.
import { getPool } from "@/lib/db/pool";
import { pendingMigrations } from "@/lib/db/migrate";
import { healthMaxHeartbeatAgeSeconds } from "@/lib/metrics/thresholds";

export const dynamic = "force-dynamic";

const NO_STORE = { "cache-control": "no-store" };

export async function GET(req: Request) {
  const scope = new URL(req.url).searchParams.get("scope");
  let maxAge: number;
  try {
    maxAge = healthMaxHeartbeatAgeSeconds();
  } catch (err) {
    return Response.json({ db: null, worker: null, error: (err as Error).message }, { status: 503, headers: NO_STORE });
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
  }
  const ok = db.ok && (scope === "db" || (worker?.ok ?? false));
  return Response.json({ db, worker }, { status: ok ? 200 : 503, headers: NO_STORE });
}
