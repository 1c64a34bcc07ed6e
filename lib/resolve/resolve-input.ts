// Inputs of resolve and resend, validated at every edge (API, CLI, dashboard) with the same schemas.
import { z } from "zod";
import { RESOLUTIONS } from "../ledger/states";
import { ZRedriveFilter, ZRedriveReason } from "../redrive/redrive-input";

const ZResolution = z.enum(RESOLUTIONS, { message: `one of ${RESOLUTIONS.join(", ")}` });
/** An operator's reason: required, as for a redrive (an incident or ticket id, or a sentence). */
const ZOperatorReason = ZRedriveReason;

/**
 * One dead letter's decision. `correctedEventId` names the event that carried the corrected data (the producer
 * published it under a new id): only with `fixed_at_source`; it must exist and be visible to the caller
 * (lib/resolve/resolve-and-resend.ts checks that before anything is written).
 */
export const ZResolveDelivery = z
  .object({
    resolution: ZResolution,
    reason: ZOperatorReason,
    correctedEventId: z
      .string()
      .trim()
      .min(1, "correctedEventId: an event id, e.g. evt_1002")
      .max(200)
      .optional()
      .describe("fixed_at_source only: the event that carried the corrected data, an existing event of the same district; shown on both timelines"),
  })
  .strict()
  .refine((v) => v.correctedEventId === undefined || v.resolution === "fixed_at_source", {
    message: "correctedEventId names the corrected event of a fixed_at_source resolution; leave it out for discarded or superseded",
    path: ["correctedEventId"],
  });

/** Bulk resolve: the bulk redrive's filter; a reason is required unless it is a dry run. */
export const ZBulkResolve = z
  .object({
    filter: ZRedriveFilter.default({}),
    resolution: ZResolution,
    reason: ZOperatorReason.optional(),
    dryRun: z.boolean().default(false),
  })
  .strict()
  .refine((v) => v.dryRun || v.reason !== undefined, {
    message: "a reason is required to resolve: say why these will never be delivered, e.g. 'Westfield decommissioned, INC-2240'",
    path: ["reason"],
  });

export const ZResendDelivery = z.object({ reason: ZOperatorReason }).strict();
