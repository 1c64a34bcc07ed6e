import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPool } from "@/lib/db/pool";
import { getPrisma } from "@/lib/db/prisma";
import { ZRetentionOverride } from "@/lib/retention/retention-input";
import { getRetentionOverview, setRetentionOverride } from "@/lib/retention/run-retention";

export const dynamic = "force-dynamic";

/** The retention policy (the environment's days and the tenants' overrides), the oldest data kept, the last runs and the tables' sizes (admins). */
export const GET = apiRoute("retention.read", async () => json(await getRetentionOverview(getPool())));

/**
 * Sets a tenant's override of the retention days (admins); `retentionDays:
 * null` removes it. An unknown tenant or days out of range: 400, nothing
 * changed. Audited `retention.policy`. 200 with the policy as it now is.
 */
export const PUT = apiRoute("retention.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZRetentionOverride);
  return json(await setRetentionOverride(getPrisma(), value, principal));
});
