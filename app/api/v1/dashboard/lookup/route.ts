import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findLookupResults, ZLookup } from "@/lib/dashboard/lookup";

export const dynamic = "force-dynamic";

/** The dashboard's one-box lookup: `q` = event id, delivery key or id, subject value, tenant or subscription. */
export const GET = apiRoute("deliveries.read", async ({ req }) => json(await findLookupResults(parseQuery(req, ZLookup.strict()))));
