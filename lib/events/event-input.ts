import { z } from "zod";
import { ZEventTypeName } from "../subscriptions/subscription-input";

export const SUBJECT_KEY_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
// Subject values are stored as PostgreSQL text and jsonb, which hold neither
// U+0000 nor a lone UTF-16 surrogate: refused here as bad input (400), not
// discovered by the INSERT, where it would fail its whole group's statement
// (lib/events/ingest.ts then retries that group event by event).
const UNSTORABLE_RE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const ZSubject = z
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

/**
 * How deeply `data` may nest (objects and arrays, `data` itself being level 1).
 * A few KB of brackets otherwise reach V8's recursion limit in JSON.stringify
 * when the envelope is built, long after validation; real event payloads are
 * a handful of levels deep.
 */
const MAX_DATA_DEPTH = 64;

/** The nesting depth of a parsed JSON value, counted without recursion (the point is to survive bombs). */
function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d > max) max = d;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, d + 1]);
  }
  return max;
}

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
    data: z.record(z.string(), z.unknown()).superRefine((data, ctx) => {
      const depth = jsonDepth(data);
      if (depth > MAX_DATA_DEPTH) ctx.addIssue({ code: "custom", message: `data is nested ${depth} levels deep; the limit is ${MAX_DATA_DEPTH}` });
    }),
    subject: ZSubject.optional(),
    occurredAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type TCreateEvent = z.infer<typeof ZCreateEvent>;
