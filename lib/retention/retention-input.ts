// The input of the retention API and CLI, validated at every edge with the
// same schemas. Client-safe: no I/O.
import { z } from "zod";
import { MAX_RETENTION_DAYS } from "./policy";

const days = (name: string) =>
  z
    .number({ message: `${name} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}` })
    .int(`${name} must be a whole number of days`)
    .min(1, `${name} must be at least 1 day`)
    .max(MAX_RETENTION_DAYS, `${name} must be at most ${MAX_RETENTION_DAYS} days (a hundred years); a larger value is a typo, not a policy`);

/** POST /api/v1/retention/run */
export const ZRunRetention = z.strictObject({ dryRun: z.boolean().default(false) });

/**
 * PUT /api/v1/retention: a tenant's override. `retentionDays: null` removes the
 * override (the tenant follows the environment's days again);
 * `payloadRetentionDays` null or absent: that tenant's payloads are kept as
 * long as its deliveries.
 */
export const ZRetentionOverride = z
  .strictObject({
    tenant: z.string({ message: "tenant is required: the tenant id the override is for" }).trim().min(1, "tenant is required").max(200),
    retentionDays: days("retentionDays").nullable(),
    payloadRetentionDays: days("payloadRetentionDays").nullable().default(null),
  })
  .superRefine((v, ctx) => {
    if (v.retentionDays === null && v.payloadRetentionDays !== null)
      ctx.addIssue({
        code: "custom",
        path: ["payloadRetentionDays"],
        message: "payloadRetentionDays needs retentionDays; pass retentionDays: null alone to remove the override",
      });
    if (v.retentionDays !== null && v.payloadRetentionDays !== null && v.payloadRetentionDays > v.retentionDays)
      ctx.addIssue({
        code: "custom",
        path: ["payloadRetentionDays"],
        message: `payloadRetentionDays (${v.payloadRetentionDays}) must be at most retentionDays (${v.retentionDays}): a payload cannot be kept longer than its delivery record`,
      });
  });
export type TRetentionOverride = z.input<typeof ZRetentionOverride>;
