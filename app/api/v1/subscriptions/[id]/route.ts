import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZUpdateSubscription } from "@/lib/subscriptions/subscription-input";
import { asReadBy, getSubscription, updateSubscription } from "@/lib/subscriptions/manage-subscriptions";
import { scopeOf } from "@/lib/tenants/scope";
import { assertReasonNotErased } from "@/lib/erasure/values";

export const dynamic = "force-dynamic";

/** The subscription; its url's credentials masked unless the caller may change it (asReadBy). */
export const GET = apiRoute("subscriptions.read", async ({ params, principal }) =>
  json(asReadBy(principal, await getSubscription(getPrisma(), params.id, scopeOf(principal)))),
);

export const PATCH = apiRoute("subscriptions.update", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZUpdateSubscription);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await updateSubscription(getPrisma(), params.id, value, principal));
});
