import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { listDeliveries, ZListDeliveries } from "@/lib/deliveries/queries";

export const dynamic = "force-dynamic";

export const GET = apiRoute("deliveries.read", async ({ req }) => json(await listDeliveries(getPrisma(), parseQuery(req, ZListDeliveries))));
