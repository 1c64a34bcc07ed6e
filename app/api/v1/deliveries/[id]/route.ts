import { apiRoute, json } from "@/lib/api/handler";
import { ledgerDb } from "@/lib/ledger/read/db";
import { getDeliveryWithAttempts } from "@/lib/deliveries/queries";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export const GET = apiRoute("deliveries.read", async ({ params, principal }) => json(await getDeliveryWithAttempts(ledgerDb(), params.id, scopeOf(principal))));
