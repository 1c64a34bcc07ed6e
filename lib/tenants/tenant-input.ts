// The tenant's input shapes, client-safe (the admin page's form and the OpenAPI document use them too).
import { z } from "zod";
import { zPageLimit } from "../api/page-input";

/** A tenant id: what producers send as subject.tenant and subscriptions carry. */
const ZTenantId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "letters, digits, _ . and - (starting with a letter or digit), e.g. lincoln");

export const ZCreateTenant = z.object({ id: ZTenantId, name: z.string().trim().min(1).max(200) }).strict();
export type TCreateTenant = z.infer<typeof ZCreateTenant>;

const TENANT_PAGE_MAX = 500;
const TENANT_PAGE_DEFAULT = 100;

/** GET /api/v1/tenants: a page of tenants by id; `q` matches the id or the name (any case). */
export const ZListTenants = z
  .object({
    q: z.string().trim().min(1).max(200).optional(),
    cursor: z.string().min(1).max(1000).optional(),
    limit: zPageLimit(TENANT_PAGE_MAX, TENANT_PAGE_DEFAULT),
  })
  .strict();
export type TListTenants = z.input<typeof ZListTenants>;
