import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateErasure } from "@/lib/erasure/erasure-input";
import { createErasure } from "@/lib/erasure/create-erasure";
import { assertGlobalPrincipal } from "@/lib/tenants/manage-tenants";
import { assertReasonNotErased } from "@/lib/erasure/values";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/**
 * Erasure on request (admins): every event whose subject holds the one key and
 * value given (within `tenant` if given) loses its payload, subject values and
 * recorded answers; its unfinished deliveries are resolved `erased`. 200 with
 * the receipt (the key, never the value; the counts, who, when, why). With
 * `dryRun: true` the counts only, nothing changed.
 */
export const POST = apiRoute("erasures.create", async ({ req, principal }) => {
  // An erasure reaches every tenant's events (or the one named): a global admin's, never a scoped one's.
  assertGlobalPrincipal(principal, "run an erasure");
  const { value } = await readJson(req, ZCreateErasure);
  if (!value.dryRun) await assertReasonNotErased(scopeOf(principal), value.reason);
  return json(await createErasure(getPrisma(), value, principal));
});
