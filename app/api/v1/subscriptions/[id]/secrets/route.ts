import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZRotateSecret, listSecrets, rotateSecret } from "@/lib/subscriptions/rotation";
import { assertSubscriptionVisible } from "@/lib/tenants/manage-tenants";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Rotate: `{secret?, overlapSeconds? (default 86400), reason?}` → 201 with the new `whsec_` secret, shown this once. */
export const POST = apiRoute("secrets.rotate", async ({ req, params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  const { value } = await readJson(req, ZRotateSecret);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await rotateSecret(getPrisma(), params.id, value, principal), 201, { "cache-control": "no-store" });
});

/** The subscription's secrets as ids and validity windows; never the secrets themselves. */
export const GET = apiRoute("subscriptions.read", async ({ params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  return json({ items: await listSecrets(getPrisma(), params.id) });
});
