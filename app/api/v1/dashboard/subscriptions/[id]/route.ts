import { z } from "zod";
import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { getSubscriptionOverview, ZRange } from "@/lib/dashboard/subscriptions";
import { scopeOf } from "@/lib/tenants/scope";
import { canAs } from "@/lib/auth/permissions";

export const dynamic = "force-dynamic";

/** One subscription's health, configuration and outcomes series over `range` (1h, 6h, 24h, 7d); the stored URL only for a viewer who may change it. */
export const GET = apiRoute("subscriptions.read", async ({ req, params, principal }) => {
  const q = parseQuery(req, z.object({ range: ZRange.optional() }).strict());
  return json(await getSubscriptionOverview({ id: params.id, range: q.range, scope: scopeOf(principal), storedUrl: canAs(principal, "subscriptions.update") }));
});
