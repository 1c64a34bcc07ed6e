// The portal link request, client-safe (the OpenAPI document uses it too).
import { z } from "zod";

/** A link's life: an hour unless asked, a day at most (the browser session it opens ends with it). */
const PORTAL_DEFAULT_SECONDS = 3600;
const PORTAL_MAX_SECONDS = 86_400;
const PORTAL_MIN_SECONDS = 60;

export const ZCreatePortalSession = z
  .object({
    tenant: z.string().trim().min(1, "name the tenant (district) the portal is for").max(100),
    subscriptionId: z.string().trim().min(1).max(200).nullish(),
    readOnly: z.boolean().default(false),
    expiresInSeconds: z
      .number()
      .int()
      .min(PORTAL_MIN_SECONDS, `at least ${PORTAL_MIN_SECONDS} seconds`)
      .max(PORTAL_MAX_SECONDS, `at most ${PORTAL_MAX_SECONDS} seconds (a day)`)
      .default(PORTAL_DEFAULT_SECONDS),
  })
  .strict();
export type TCreatePortalSession = z.infer<typeof ZCreatePortalSession>;
