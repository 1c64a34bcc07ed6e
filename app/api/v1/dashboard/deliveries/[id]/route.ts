import { apiRoute, json } from "@/lib/api/handler";
import { getDeliveryDetail } from "@/lib/dashboard/delivery";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Delivery detail for the dashboard: attempts, redrive history, headers as sent, payload. */
export const GET = apiRoute("deliveries.read", async ({ params, principal }) => json(await getDeliveryDetail({ id: params.id, scope: scopeOf(principal) })));
