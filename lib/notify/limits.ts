// The notification inputs' limits, for the server's schemas (lib/notify/input.ts) and the browser's forms alike:
// no zod here, so a client component that imports these does not bring zod (whose eval probe the pages' CSP
// reports) into its bundle.

/** The largest dead-letter threshold a district or the operator may set (tenant_contacts' check, migration 0044). */
export const MAX_DLQ_THRESHOLD = 100_000;
