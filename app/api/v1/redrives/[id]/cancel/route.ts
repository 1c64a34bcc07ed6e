import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCancelRedrive } from "@/lib/redrive/redrive-input";
import { cancelRedriveBatch } from "@/lib/redrive/redrive-batches";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Stops a running batch where it is; what was not reached stays dead-lettered. Body (optional): {reason}. */
export const POST = apiRoute("redrives.cancel", async ({ req, params, principal }) => {
  const hasBody = Number(req.headers.get("content-length") ?? "0") > 0 || req.headers.get("content-type");
  const reason = hasBody ? (await readJson(req, ZCancelRedrive)).value.reason : undefined;
  await assertReasonNotErased(scopeOf(principal), reason);
  return json(await cancelRedriveBatch(getPrisma(), { id: params.id, principal, reason }));
});
