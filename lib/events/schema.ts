import { z } from "zod";
import { ZEventTypeName } from "../subscriptions/schema";

export const SUBJECT_KEY_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
// Subject values are stored as PostgreSQL text and jsonb, which hold neither
// U+0000 nor a lone UTF-16 surrogate: refused here as bad input (400), not
// discovered by the INSERT, where it would fail its whole group's statement
// (lib/events/ingest.ts then retries that group event by event).
const UNSTORABLE_RE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const ZSubject = z
  .record(
    z.string().regex(SUBJECT_KEY_RE, "subject keys are identifiers such as studentId"),
    z.union([
      z
        .string()
        .min(1)
        .max(200)
        .refine((v) => !UNSTORABLE_RE.test(v), "subject values cannot contain U+0000 or unpaired surrogates"),
      z.number().finite(),
    ]),
  )
  .refine((o) => Object.keys(o).length <= 20, "at most 20 subject keys");

export const ZCreateEvent = z
  .object({
    id: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9._:\-]+$/, "event ids are letters, digits and . _ : -"),
    // hookledger.* is the namespace of hookledger's own operational events
    // (written by the ledger's triggers); producers cannot forge them.
    type: ZEventTypeName.refine((t) => !t.startsWith("hookledger."), "event types starting with hookledger. are reserved for hookledger's operational events"),
    data: z.record(z.string(), z.unknown()),
    subject: ZSubject.optional(),
    occurredAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type TCreateEvent = z.infer<typeof ZCreateEvent>;
