import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findLookupResults, ZLookup } from "@/lib/dashboard/lookup";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** The dashboard's one-box lookup: `q` = event id, delivery key or id, subject value, tenant or subscription. */
export const GET = apiRoute("deliveries.read", async ({ req, principal }) =>
  json(await findLookupResults(parseQuery(req, ZLookup.strict()), undefined, scopeOf(principal))),
);
