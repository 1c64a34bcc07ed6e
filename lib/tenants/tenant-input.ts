// The tenant's input shapes, client-safe (the admin page's form and the OpenAPI document use them too).
import { z } from "zod";

/** A tenant id: what producers send as subject.tenant and subscriptions carry. */
const ZTenantId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "letters, digits, _ . and - (starting with a letter or digit), e.g. lincoln");

export const ZCreateTenant = z.object({ id: ZTenantId, name: z.string().trim().min(1).max(200) }).strict();
export type TCreateTenant = z.infer<typeof ZCreateTenant>;
