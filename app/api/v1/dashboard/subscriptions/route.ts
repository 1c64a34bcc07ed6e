import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findSubscriptionHealth, ZSubscriptionHealthQuery } from "@/lib/dashboard/subscriptions";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Every subscription's health (optionally one `tenant`'s). */
export const GET = apiRoute("subscriptions.read", async ({ req, principal }) =>
  json({ items: await findSubscriptionHealth({ ...parseQuery(req, ZSubscriptionHealthQuery.strict()), scope: scopeOf(principal) }) }),
);
