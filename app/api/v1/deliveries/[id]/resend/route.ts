import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZResendDelivery } from "@/lib/resolve/resolve-input";
import { resendDelivery } from "@/lib/resolve/resolve-and-resend";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Send a delivered (or resolved) delivery again: same key, same bytes, a fresh signature. Body: {reason}. */
export const POST = apiRoute("deliveries.resend", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZResendDelivery);
  await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await resendDelivery(getPrisma(), { id: params.id, reason: value.reason, principal }));
});
