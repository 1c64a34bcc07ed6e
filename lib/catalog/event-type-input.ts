// The event catalog's request bodies (POST /api/v1/event-types, PUT /api/v1/event-types/:type). Client-safe: the
// dashboard's forms use the same shapes.
import { z } from "zod";
import { ZEventTypeName } from "../subscriptions/subscription-input";

/** A catalogued type: the publish's own rule for event types (lib/events/event-input.ts), hookledger.* reserved. */
const ZCatalogTypeName = ZEventTypeName.refine(
  (t) => !t.startsWith("hookledger."),
  "event types starting with hookledger. are reserved for hookledger's operational events",
);

/** A JSON Pointer into an event's data, e.g. /student_id (RFC 6901: "" or segments each after a "/"). */
const ZSummaryField = z
  .string()
  .max(200)
  .regex(/^(\/([^~/]|~[01])*)+$/, "a JSON Pointer into data, e.g. /student_id");

const ZJsonObject = z.record(z.string(), z.unknown());

const fields = {
  description: z.string().trim().min(1, "describe the event for the districts that receive it").max(2000),
  /** A JSON Schema (2020-12) for `data`; null removes it. */
  schema: ZJsonObject.nullable().optional(),
  /** An example `data`; it must match `schema` when both are given. */
  example: ZJsonObject.nullable().optional(),
  summaryFields: z.array(ZSummaryField).max(5, "at most 5 summary fields").optional(),
};

export const ZCreateEventType = z.object({ type: ZCatalogTypeName, ...fields }).strict();
export type TCreateEventType = z.infer<typeof ZCreateEventType>;

/**
 * An update: the fields given are set (schema or example null removes it), the others kept. `deprecated: false`
 * brings a deprecated type back.
 */
export const ZUpdateEventType = z
  .object({ ...fields, description: fields.description.optional(), deprecated: z.boolean().optional() })
  .strict()
  .refine((v) => Object.keys(v).length > 0, "give at least one field to change");
export type TUpdateEventType = z.infer<typeof ZUpdateEventType>;
