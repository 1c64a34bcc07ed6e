import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZArchiveSubscription, archiveSubscription } from "@/lib/subscriptions/archive";
import { assertSubscriptionVisible } from "@/lib/tenants/manage-tenants";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Archive: `{reason}` → the subscription with `archivedAt`, and how many queued deliveries were resolved as superseded; 409 if already archived. */
export const POST = apiRoute("subscriptions.archive", async ({ req, params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  const { value } = await readJson(req, ZArchiveSubscription);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await archiveSubscription(getPrisma(), params.id, value, principal));
});
