import { apiRoute, json, readJson } from "@/lib/api/handler";
import { createPool } from "@/lib/db/pool";
import { getPrisma } from "@/lib/db/prisma";
import { logger } from "@/lib/log";
import { ZRunRetention } from "@/lib/retention/retention-input";
import { beginTrackedRetention, runRetention } from "@/lib/retention/run-retention";

export const dynamic = "force-dynamic";

/**
 * Starts a retention run now (admins): removes finished deliveries, their
 * attempts and unneeded events older than the policy, and expunges payloads
 * older than the payload policy; recorded in retention_runs and audited
 * `retention.run` when it finishes. Answered 202 with the run's record as it
 * starts (status `running`): a run over a large ledger outlasts a request, so
 * it goes on in this process and GET /api/v1/retention shows its counts grow
 * and its end. With `dryRun: true`, 200 with the counts only, nothing changed
 * or recorded. 409 while another run (the daily one, or another operator's)
 * holds the lock.
 */
export const POST = apiRoute("retention.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZRunRetention);
  // Its own small pool: a run's statements (a month's check, a dry run's counts) may take longer than a request's 10 s limit.
  const pool = createPool({ max: 3, statementTimeoutMs: 120_000 });
  const opts = { trigger: "manual" as const, actor: principal.actor };
  if (value.dryRun) {
    try {
      return json(await runRetention(pool, getPrisma(), { ...opts, dryRun: true }));
    } finally {
      await pool.end();
    }
  }
  const started = await beginTrackedRetention(pool, getPrisma(), opts).catch(async (err) => {
    await pool.end();
    throw err;
  });
  // A manual run is started or refused (409), never skipped: only the daily run is null when not due.
  const { run, done } = started!;
  done
    .then((r) =>
      logger.info(
        { run: r.id, deliveries: r.deliveries, attempts: r.attempts, events: r.events, expunged: r.expunged, ms: r.durationMs },
        r.status === "stopped" ? "retention run stopped: the server is stopping (its record says so)" : "retention run finished",
      ),
    )
    // Its record says failed, with the message; the next run starts clean.
    .catch((err) => logger.error({ err, run: run.id }, "retention run failed"))
    .finally(() => pool.end().catch(() => {}));
  return json(run, 202, { location: "/api/v1/retention" });
});
