// Inputs of redrive, validated at every edge (API, CLI, dashboard) with the same schemas.
import { z } from "zod";
import { BATCH_STATUSES, DEAD_LETTER_REASON_LIST, ERROR_CLASSES } from "../ledger/states";
import { zPageLimit } from "../api/page-input";

/** A conservative default: a district that has just fixed its importer can take 10/s. */
export const DEFAULT_RATE_PER_SECOND = 10;
export const MAX_RATE_PER_SECOND = 5_000;

const ZWhen = z.iso.datetime({ offset: true, message: "an ISO 8601 time such as 2026-11-29T08:00:00Z" });

export const ZRedriveReason = z.string().trim().min(3, "say why: an incident or ticket id, e.g. INC-2231 (at least 3 characters)").max(500);

export const ZRedriveFilter = z
  .object({
    subscriptionId: z.string().min(1).max(64).optional(),
    // The ledger's own names: a typo would otherwise match nothing and read as "nothing to redrive".
    deadLetterReason: z.enum(DEAD_LETTER_REASON_LIST as [string, ...string[]]).optional(),
    errorClass: z.enum(ERROR_CLASSES).optional(),
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

export const BATCH_KINDS = ["redrive", "recover", "backfill"] as const;
export type BatchKind = (typeof BATCH_KINDS)[number];

const REDRIVE_PAGE_MAX = 500;
const REDRIVE_PAGE_DEFAULT = 100;

/** GET /api/v1/redrives: a page of batches, newest first; `cursor` is the previous page's `nextCursor` (or `prevCursor`). */
export const ZListRedrives = z
  .object({
    status: z.enum(BATCH_STATUSES).optional(),
    kind: z.enum(BATCH_KINDS).optional(),
    cursor: z.string().min(1).max(1000).optional(),
    limit: zPageLimit(REDRIVE_PAGE_MAX, REDRIVE_PAGE_DEFAULT),
  })
  .strict();
export type TListRedrives = z.input<typeof ZListRedrives>;

export const ZCancelRedrive = z.object({ reason: z.string().trim().max(500).optional() }).strict();

/**
 * The widest window a recover or backfill accepts, whatever retention keeps:
 * this bound keeps one batch to what an operator can reason about (and the
 * snapshot to one statement's worth).
 */
const MAX_WINDOW_DAYS = 400;
/** A client's clock may run a little ahead of ours: an `until` up to this far in the future is taken as now. */
const CLOCK_SKEW_SECONDS = 60;

/** The states a recover re-sends (and its default). */
export const RECOVER_STATES = ["delivered", "resolved", "dead_letter"] as const;

const ZWindowFields = {
  since: ZWhen,
  until: ZWhen.optional(),
  /** Required unless dryRun: a preview changes nothing, so there is nothing to give a reason for yet. */
  reason: ZRedriveReason.optional(),
  ratePerSecond: z.number().int().min(1, "at least 1 per second").max(MAX_RATE_PER_SECOND, `at most ${MAX_RATE_PER_SECOND} per second`).default(DEFAULT_RATE_PER_SECOND),
  dryRun: z.boolean().default(false),
};

/** since before until, neither in the future, at most MAX_WINDOW_DAYS wide; a reason unless dryRun. */
function checkWindow(v: { since: string; until?: string; reason?: string; dryRun: boolean }, ctx: z.RefinementCtx) {
  if (!v.dryRun && v.reason === undefined)
    ctx.addIssue({ code: "custom", path: ["reason"], message: "a reason is required unless dryRun: an incident or ticket id, e.g. INC-2231" });
  const now = Date.now();
  const since = new Date(v.since).getTime();
  const until = v.until ? new Date(v.until).getTime() : now;
  if (since >= now) ctx.addIssue({ code: "custom", path: ["since"], message: "since is in the future: nothing was created after now" });
  if (v.until && until > now + CLOCK_SKEW_SECONDS * 1000) ctx.addIssue({ code: "custom", path: ["until"], message: "until is in the future; leave it out to mean now" });
  if (v.until && since >= until) ctx.addIssue({ code: "custom", path: ["until"], message: "since must be before until" });
  if (Math.min(until, now) - since > MAX_WINDOW_DAYS * 86_400_000)
    ctx.addIssue({ code: "custom", path: ["since"], message: `the window is wider than ${MAX_WINDOW_DAYS} days; split it into several` });
}

export const ZRecover = z
  .object({
    ...ZWindowFields,
    states: z
      .array(z.enum(RECOVER_STATES, { message: `one of ${RECOVER_STATES.join(", ")}` }))
      .min(1)
      .max(RECOVER_STATES.length)
      .optional(),
  })
  .strict()
  .superRefine(checkWindow);
export type TRecover = z.infer<typeof ZRecover>;

export const ZBackfill = z.object(ZWindowFields).strict().superRefine(checkWindow);
export type TBackfill = z.infer<typeof ZBackfill>;
