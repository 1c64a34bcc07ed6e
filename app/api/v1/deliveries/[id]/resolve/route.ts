import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZResolveDelivery } from "@/lib/resolve/resolve-input";
import { resolveDelivery } from "@/lib/resolve/resolve-and-resend";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Resolve one dead letter: it will not be delivered, and this is why. Body: {resolution, reason, correctedEventId?}. */
export const POST = apiRoute("deliveries.resolve", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZResolveDelivery);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(
    await resolveDelivery(getPrisma(), { id: params.id, resolution: value.resolution, reason: value.reason, correctedEventId: value.correctedEventId, principal }),
  );
});
