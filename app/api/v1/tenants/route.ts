import { apiRoute, json, parseQuery, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateTenant, ZListTenants, createTenant, listTenantPage } from "@/lib/tenants/manage-tenants";

export const dynamic = "force-dynamic";

/** One page of tenants (districts) by id: `{items: [{id, name, createdAt}], nextCursor}` (null on the last page). Admins. */
export const GET = apiRoute("tenants.manage", async ({ req, principal }) => json(await listTenantPage(getPrisma(), principal, parseQuery(req, ZListTenants))));

/** Registers a tenant: `{id, name}` → 201; 409 if the id exists; global admins only. */
export const POST = apiRoute("tenants.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateTenant);
  return json(await createTenant(getPrisma(), value, principal), 201);
});
