import { apiRoute, json } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { expireSecret } from "@/lib/subscriptions/rotation";
import { assertSubscriptionVisible } from "@/lib/tenants/manage-tenants";

export const dynamic = "force-dynamic";

/** Ends a rotation's overlap early: the old secret stops signing now (its row is kept, expired). The newest secret: 409. */
export const DELETE = apiRoute("secrets.expire", async ({ params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  return json(await expireSecret(getPrisma(), params.id, params.secretId, principal));
});
