import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findSubscriptionDeliveries, ZSubscriptionDeliveries } from "@/lib/dashboard/subscriptions";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** The subscription's deliveries, newest first: state, eventType, from, to, statusCode, errorClass, cursor, limit. */
export const GET = apiRoute("deliveries.read", async ({ req, params, principal }) => {
  const q = parseQuery(req, ZSubscriptionDeliveries.omit({ subscriptionId: true }).strict());
  return json(await findSubscriptionDeliveries({ ...q, subscriptionId: params.id, scope: scopeOf(principal) }));
});
