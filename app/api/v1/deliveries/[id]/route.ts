import { apiRoute, json } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { getDeliveryWithAttempts } from "@/lib/deliveries/queries";

export const dynamic = "force-dynamic";

export const GET = apiRoute("deliveries.read", async ({ params }) => json(await getDeliveryWithAttempts(getPrisma(), params.id)));
