import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZContacts, getContacts, setContacts } from "@/lib/notify/contacts";

export const dynamic = "force-dynamic";

/** The tenant's notification contacts: `{tenant, emails, webhookUrl, updatedAt, updatedBy}`. Another tenant's: 404 for a scoped caller. */
export const GET = apiRoute("contacts.read", async ({ params, principal }) => json(await getContacts(getPrisma(), params.id, principal)));

/** Replaces them: `{emails: [...], webhookUrl?}` (at most 20 addresses; the webhook SSRF-checked like an endpoint) → 200; 400 naming the field, nothing saved. */
export const PUT = apiRoute("contacts.update", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZContacts);
  return json(await setContacts(getPrisma(), params.id, value, principal));
});
