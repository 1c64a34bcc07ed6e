import { apiRoute, json, parseQuery, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateRedrive, ZListRedrives } from "@/lib/redrive/redrive-input";
import { createRedriveBatch, listRedriveBatchPage, previewRedrive } from "@/lib/redrive/redrive-batches";
import { scopeOf } from "@/lib/tenants/scope";
import { assertReasonNotErased } from "@/lib/erasure/values";

export const dynamic = "force-dynamic";

/**
 * A bulk redrive. With `dryRun: true`, the preview only (exact count, a
 * sample, what is held back): `{id: null, matched, status: "preview", …}`.
 * Otherwise 201 with the persisted batch `{id, matched, status: "running", …}`.
 */
export const POST = apiRoute("redrives.create", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateRedrive);
  const prisma = getPrisma();
  if (value.dryRun) {
    const preview = await previewRedrive(prisma, { filter: value.filter, latestStateWins: value.latestStateWins, scope: scopeOf(principal) });
    return json({ id: null, status: "preview", ...preview });
  }
  await assertReasonNotErased(scopeOf(principal), value.reason);
  const batch = await createRedriveBatch(prisma, { ...value, reason: value.reason! }, principal);
  return json(batch, 201);
});

/** One page of batches, newest first: `{items, nextCursor, prevCursor}` (nextCursor null on the last page, prevCursor on the first). */
export const GET = apiRoute("dlq.read", async ({ req, principal }) => json(await listRedriveBatchPage(getPrisma(), parseQuery(req, ZListRedrives), scopeOf(principal))));
