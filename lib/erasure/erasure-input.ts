// The input of an erasure, validated at every edge (API and CLI) with the same
// schema. Client-safe: no I/O.
import { z } from "zod";
import { SUBJECT_KEY_RE } from "../events/event-input";

/**
 * Keys an erasure can name: the ones the ingest indexes into subject_values
 * (lib/events/publish.ts subjectValues: every subject key of the identifier
 * form), except `tenant`, which scopes an erasure (`tenant`) but does not
 * name a person: erasing a whole district is not a records request.
 */
function isErasableKey(key: string): boolean {
  return SUBJECT_KEY_RE.test(key) && key !== "tenant";
}

const EXAMPLE = 'e.g. {"studentId": "stu_881"}';

const ZErasureSubject = z
  .record(z.string(), z.union([z.string(), z.number()]), { message: `subject is required: one searchable key and its value, ${EXAMPLE}` })
  .superRefine((s, ctx) => {
    const keys = Object.keys(s);
    if (keys.length !== 1) {
      ctx.addIssue({ code: "custom", message: `subject names exactly one searchable key and its value, ${EXAMPLE} (got ${keys.length} keys)` });
      return;
    }
    const [key] = keys;
    if (!isErasableKey(key))
      ctx.addIssue({
        code: "custom",
        path: [key],
        message:
          key === "tenant"
            ? "tenant is not a subject to erase; name the person (e.g. studentId) and pass tenant to limit the erasure to one district"
            : `subject key ${JSON.stringify(key)} is not searchable: only subject keys the ingest indexes (a letter, then letters, digits or _) can be erased by`,
      });
    const value = String(s[key]).trim();
    if (value === "") ctx.addIssue({ code: "custom", path: [key], message: `the value of ${key} is empty; name the one value to erase` });
    else if (value.length > 200) ctx.addIssue({ code: "custom", path: [key], message: "subject values are at most 200 characters" });
  });

export const ZCreateErasure = z
  .object({
    subject: ZErasureSubject,
    tenant: z.string().trim().min(1, "tenant is empty; leave it out to erase in every tenant").max(200).optional(),
    reason: z
      .string({ message: "reason is required: the request it answers, e.g. 'records request 2291'" })
      .trim()
      .min(3, "reason is required: the request it answers, e.g. 'records request 2291' (at least 3 characters)")
      .max(500),
    dryRun: z.boolean().default(false),
  })
  .strict()
  .superRefine((v, ctx) => {
    // The reason is kept in the erasure's record and its audit row, which must not repeat what was erased.
    const value = String(Object.values(v.subject)[0] ?? "").trim();
    if (value && v.reason.toLowerCase().includes(value.toLowerCase()))
      ctx.addIssue({
        code: "custom",
        path: ["reason"],
        message: "the reason repeats the value being erased; the receipt and the audit log keep the reason, so give the request's number instead",
      });
  });
export type TCreateErasure = z.input<typeof ZCreateErasure>;

/** The one key and value of a validated subject. */
export function subjectPair(subject: Record<string, string | number>): { key: string; value: string } {
  const [key, value] = Object.entries(subject)[0];
  return { key, value: String(value).trim() };
}
