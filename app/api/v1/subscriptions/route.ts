import { z } from "zod";
import { apiRoute, json, parseQuery, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateSubscription } from "@/lib/subscriptions/schema";
import { createSubscription, listSubscriptions } from "@/lib/subscriptions/service";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export const POST = apiRoute("subscriptions.create", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateSubscription);
  return json(await createSubscription(getPrisma(), value, principal), 201);
});

export const GET = apiRoute("subscriptions.read", async ({ req, principal }) => {
  const q = parseQuery(req, z.object({ tenant: z.string().max(200).optional(), archived: z.enum(["true", "false"]).optional() }).strict());
  return json({ items: await listSubscriptions(getPrisma(), { tenant: q.tenant, archived: q.archived === "true", scope: scopeOf(principal) }) });
});
