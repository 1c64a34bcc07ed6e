// The notification inputs' limits, for the server's schemas (lib/notify/input.ts) and the browser's forms alike:
// no zod here, so a client component that imports these does not bring zod (whose eval probe the pages' CSP
// reports) into its bundle.

/** The largest dead-letter threshold a district or the operator may set (tenant_contacts' check, migration 0044). */
export const MAX_DLQ_THRESHOLD = 100_000;

/** The threshold's number field, as the district's contacts form and the operator's default form both ask for it. */
export const DLQ_THRESHOLD_FIELD = { name: "dlqThreshold", type: "number", inputMode: "numeric", min: 1, max: MAX_DLQ_THRESHOLD, step: 1 } as const;
