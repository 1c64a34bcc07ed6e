import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { ledgerDb } from "@/lib/ledger/read/db";
import { listDeliveries, ZListDeliveries } from "@/lib/deliveries/queries";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export const GET = apiRoute("deliveries.read", async ({ req, principal }) =>
  json(await listDeliveries(ledgerDb(), parseQuery(req, ZListDeliveries), scopeOf(principal))),
);
