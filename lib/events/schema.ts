import { z } from "zod";
import { ZEventTypeName } from "../subscriptions/schema";

export const SUBJECT_KEY_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

export const ZSubject = z
  .record(
    z.string().regex(SUBJECT_KEY_RE, "subject keys are identifiers such as studentId"),
    z.union([z.string().min(1).max(200), z.number().finite()]),
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
