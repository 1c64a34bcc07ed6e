import { apiRoute, json } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { getRedriveBatch } from "@/lib/redrive/redrive-batches";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** A batch's progress: matched, redriven, skipped, remaining, delivered since, failed again, status. */
export const GET = apiRoute("dlq.read", async ({ params, principal }) => json(await getRedriveBatch(getPrisma(), params.id, scopeOf(principal))));
