import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZBackfill } from "@/lib/redrive/redrive-input";
import { createBackfillBatch, previewBackfill } from "@/lib/recover/recover-and-backfill";
import { scopeOf } from "@/lib/tenants/scope";
import { assertReasonNotErased } from "@/lib/erasure/values";

export const dynamic = "force-dynamic";

/**
 * Backfill a subscription: deliveries for the events received between `since`
 * and `until` (default now) that it receives (type, tenant) and has none for
 * yet, created and sent as a paced batch. With `dryRun: true`, the preview
 * only; otherwise 201 with the running batch (kind "backfill"). A second
 * backfill of the same window finds nothing and answers 409.
 */
export const POST = apiRoute("subscriptions.backfill", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZBackfill);
  const prisma = getPrisma();
  if (value.dryRun) return json({ id: null, status: "preview", ...(await previewBackfill(prisma, params.id, value, scopeOf(principal))) });
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await createBackfillBatch(prisma, params.id, { ...value, reason: value.reason! }, principal), 201);
});
