import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateTenant, createTenant, listTenants } from "@/lib/tenants/manage-tenants";

export const dynamic = "force-dynamic";

/** Every tenant (district): id, name, createdAt. Admins. */
export const GET = apiRoute("tenants.manage", async ({ principal }) => json({ items: await listTenants(getPrisma(), principal) }));

/** Registers a tenant: `{id, name}` → 201; 409 if the id exists; global admins only. */
export const POST = apiRoute("tenants.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateTenant);
  return json(await createTenant(getPrisma(), value, principal), 201);
});
