import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZArchiveSubscription, unarchiveSubscription } from "@/lib/subscriptions/archive";
import { assertSubscriptionVisible } from "@/lib/tenants/manage-tenants";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Unarchive: `{reason}` → the subscription back in the lists and matching new events; 409 if it is not archived. */
export const POST = apiRoute("subscriptions.archive", async ({ req, params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  const { value } = await readJson(req, ZArchiveSubscription);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await unarchiveSubscription(getPrisma(), params.id, value, principal));
});
