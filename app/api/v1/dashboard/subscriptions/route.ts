import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findSubscriptionHealthPage } from "@/lib/dashboard/subscriptions";
import { ZListSubscriptions } from "@/lib/subscriptions/subscription-input";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** One page of subscriptions with their health, searched, filtered and ordered as GET /api/v1/subscriptions is. */
export const GET = apiRoute("subscriptions.read", async ({ req, principal }) =>
  json(await findSubscriptionHealthPage({ ...parseQuery(req, ZListSubscriptions), scope: scopeOf(principal) })),
);
