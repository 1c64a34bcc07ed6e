import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZRedriveDelivery } from "@/lib/redrive/redrive-input";
import { redriveDelivery } from "@/lib/redrive/redrive-batches";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Redrive one dead-lettered delivery (or retry a scheduled one now). Body: {reason}. */
export const POST = apiRoute("deliveries.redrive", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZRedriveDelivery);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await redriveDelivery(getPrisma(), { id: params.id, reason: value.reason, principal }));
});
