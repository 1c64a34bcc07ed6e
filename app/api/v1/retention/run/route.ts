import { apiRoute, json, readJson } from "@/lib/api/handler";
import { createPool } from "@/lib/db/pool";
import { getPrisma } from "@/lib/db/prisma";
import { ZRunRetention } from "@/lib/retention/schema";
import { runRetention } from "@/lib/retention/service";

export const dynamic = "force-dynamic";

/**
 * Runs retention now (admins): removes finished deliveries, their attempts and
 * unneeded events older than the policy, and expunges payloads older than the
 * payload policy; recorded in retention_runs and audited `retention.run`. With
 * `dryRun: true` the counts only, nothing changed or recorded. 409 while
 * another run (the daily one, or another operator's) holds the lock.
 */
export const POST = apiRoute("retention.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZRunRetention);
  // Its own small pool: a run's statements (a month's check, a dry run's counts) may take longer than a request's 10 s limit.
  const pool = createPool({ max: 3, statementTimeoutMs: 120_000 });
  try {
    return json(await runRetention(pool, getPrisma(), { dryRun: value.dryRun, trigger: "manual", actor: principal.actor }));
  } finally {
    await pool.end();
  }
});
