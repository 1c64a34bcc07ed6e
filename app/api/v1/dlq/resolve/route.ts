import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZBulkResolve } from "@/lib/resolve/resolve-input";
import { previewResolve, resolveDeadLetters } from "@/lib/resolve/resolve-and-resend";
import { scopeOf } from "@/lib/tenants/scope";
import { assertReasonNotErased } from "@/lib/erasure/values";

export const dynamic = "force-dynamic";

/**
 * Bulk resolve of the dead letters a filter matches (the bulk redrive's
 * filter, any subscription state). With `dryRun: true`, the preview only:
 * `{id: null, status: "preview", matched, sample, …}`. Otherwise 200 with
 * `{id, status: "resolved", resolved, resolution, filter}`.
 */
export const POST = apiRoute("deliveries.resolve", async ({ req, principal }) => {
  const { value } = await readJson(req, ZBulkResolve);
  const prisma = getPrisma();
  if (value.dryRun) return json({ id: null, status: "preview", ...(await previewResolve(prisma, { filter: value.filter, scope: scopeOf(principal) })) });
  await assertReasonNotErased(scopeOf(principal), value.reason);
  const r = await resolveDeadLetters(prisma, { filter: value.filter, resolution: value.resolution, reason: value.reason! }, principal);
  return json({ status: "resolved", ...r });
});
