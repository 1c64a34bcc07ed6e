import { apiRoute, json, parseQuery, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateSubscription, ZListSubscriptions } from "@/lib/subscriptions/subscription-input";
import { asReadBy, createSubscription } from "@/lib/subscriptions/manage-subscriptions";
import { listSubscriptionPage } from "@/lib/subscriptions/list";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export const POST = apiRoute("subscriptions.create", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateSubscription);
  return json(await createSubscription(getPrisma(), value, principal), 201);
});

/** One page of subscriptions: `{items, nextCursor}` (null on the last page); urls as asReadBy gives them. */
export const GET = apiRoute("subscriptions.read", async ({ req, principal }) => {
  const page = await listSubscriptionPage(getPrisma(), parseQuery(req, ZListSubscriptions), scopeOf(principal));
  return json({ ...page, items: page.items.map((s) => asReadBy(principal, s)) });
});
