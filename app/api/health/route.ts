import { getPool } from "@/lib/db/pool";
import { pendingMigrations } from "@/lib/db/migrate";

export const dynamic = "force-dynamic";

// No token needed (INTERFACES.md). 503 when the database is unreachable or behind.
export async function GET() {
  const pool = getPool();
  try {
    const pending = await pendingMigrations(pool);
    const { rows } = await pool.query<{ age: number | null; workers: number }>(
      `SELECT EXTRACT(EPOCH FROM now() - max(beat_at))::float AS age, count(*) FILTER (WHERE stopped_at IS NULL AND beat_at > now() - interval '30 seconds')::int AS workers
       FROM worker_heartbeats`,
    );
    const worker = { alive: rows[0].workers, lastBeatAgeSeconds: rows[0].age };
    const ok = pending.length === 0;
    return Response.json({ db: pending.length ? { ok: false, pendingMigrations: pending } : { ok: true }, worker }, { status: ok ? 200 : 503 });
  } catch (err) {
    return Response.json({ db: { ok: false, error: (err as Error).message }, worker: null }, { status: 503 });
  }
}
