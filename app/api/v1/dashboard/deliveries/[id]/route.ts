import { apiRoute, json } from "@/lib/api/handler";
import { getDeliveryDetail } from "@/lib/dashboard/delivery";

export const dynamic = "force-dynamic";

/** Delivery detail for the dashboard: attempts, redrive history, headers as sent, payload. */
export const GET = apiRoute("deliveries.read", async ({ params }) => json(await getDeliveryDetail({ id: params.id })));
