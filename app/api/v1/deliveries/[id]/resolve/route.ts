import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZResolveDelivery } from "@/lib/resolve/schema";
import { resolveDelivery } from "@/lib/resolve/service";

export const dynamic = "force-dynamic";

/** Resolve one dead letter: it will not be delivered, and this is why. Body: {resolution, reason}. */
export const POST = apiRoute("deliveries.resolve", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZResolveDelivery);
  return json(await resolveDelivery(getPrisma(), { id: params.id, resolution: value.resolution, reason: value.reason, principal }));
});
