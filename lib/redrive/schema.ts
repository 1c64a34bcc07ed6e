// Inputs of redrive, validated at every edge (API, CLI, dashboard) with the same schemas.
import { z } from "zod";

/** A conservative default: a district that has just fixed its importer can take 10/s. */
export const DEFAULT_RATE_PER_SECOND = 10;
export const MAX_RATE_PER_SECOND = 5_000;
export const DEAD_LETTER_REASONS = ["exhausted", "permanent", "gone", "target_blocked"] as const;

const ZWhen = z.iso.datetime({ offset: true, message: "an ISO 8601 time such as 2026-11-29T08:00:00Z" });

export const ZRedriveReason = z
  .string()
  .trim()
  .min(3, "say why: an incident or ticket id, e.g. INC-2231 (at least 3 characters)")
  .max(500);

export const ZRedriveFilter = z
  .object({
    subscriptionId: z.string().min(1).max(64).optional(),
    deadLetterReason: z.string().min(1).max(64).optional(),
    errorClass: z.string().min(1).max(64).optional(),
    statusCode: z.number().int().min(100).max(599).optional(),
    deadLetteredFrom: ZWhen.optional(),
    deadLetteredTo: ZWhen.optional(),
  })
  .strict()
  .refine((f) => !f.deadLetteredFrom || !f.deadLetteredTo || new Date(f.deadLetteredFrom) < new Date(f.deadLetteredTo), {
    message: "deadLetteredFrom must be before deadLetteredTo",
    path: ["deadLetteredTo"],
  });
export type TRedriveFilter = z.infer<typeof ZRedriveFilter>;

export const ZRedriveDelivery = z.object({ reason: ZRedriveReason }).strict();
export type TRedriveDelivery = z.infer<typeof ZRedriveDelivery>;

export const ZCreateRedrive = z
  .object({
    filter: ZRedriveFilter.default({}),
    reason: ZRedriveReason.optional(),
    ratePerSecond: z.number().int().min(1).max(MAX_RATE_PER_SECOND).default(DEFAULT_RATE_PER_SECOND),
    latestStateWins: z.boolean().default(false),
    dryRun: z.boolean().default(false),
  })
  .strict()
  .refine((v) => v.dryRun || v.reason !== undefined, {
    message: "a reason is required to redrive: an incident or ticket id, e.g. INC-2231",
    path: ["reason"],
  });
export type TCreateRedrive = z.infer<typeof ZCreateRedrive>;

export const ZListRedrives = z
  .object({
    status: z.enum(["running", "cancelled", "done"]).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();

export const ZCancelRedrive = z.object({ reason: z.string().trim().max(500).optional() }).strict();
