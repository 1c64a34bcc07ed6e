import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findSubscriptionHealth, ZSubscriptionHealthQuery } from "@/lib/dashboard/subscriptions";

export const dynamic = "force-dynamic";

/** Every subscription's health (optionally one `tenant`'s). */
export const GET = apiRoute("subscriptions.read", async ({ req }) =>
  json({ items: await findSubscriptionHealth(parseQuery(req, ZSubscriptionHealthQuery.strict())) }),
);
