import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZRecover } from "@/lib/redrive/redrive-input";
import { createRecoverBatch, previewRecover } from "@/lib/recover/recover-and-backfill";
import { scopeOf } from "@/lib/tenants/scope";
import { assertReasonNotErased } from "@/lib/erasure/values";

export const dynamic = "force-dynamic";

/**
 * Recover a window: every delivery of the subscription created between
 * `since` and `until` (default now) in `states` (default delivered, resolved,
 * dead_letter), sent again as a paced batch. With `dryRun: true`, the preview
 * only (`{id: null, status: "preview", matched, byState, sample, …}`);
 * otherwise 201 with the running batch (kind "recover"), followed on
 * /api/v1/redrives/{id}.
 */
export const POST = apiRoute("subscriptions.recover", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZRecover);
  const prisma = getPrisma();
  if (value.dryRun) return json({ id: null, status: "preview", ...(await previewRecover(prisma, params.id, value, scopeOf(principal))) });
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await createRecoverBatch(prisma, params.id, { ...value, reason: value.reason! }, principal), 201);
});
