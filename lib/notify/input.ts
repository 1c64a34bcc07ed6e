// The notification routes' inputs, importable by the OpenAPI document and the forms (no server code).
import { z } from "zod";
import { MAX_DLQ_THRESHOLD } from "./limits";

const MAX_CONTACT_EMAILS = 20;

// One address: local@domain with a dot in the domain, no spaces or angle brackets (no "Name <a@b>" forms to misread).
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** PUT /api/v1/tenants/:id/contacts: every contact (what is not sent is removed). */
export const ZContacts = z.strictObject({
  emails: z
    .array(z.string().trim().max(254).regex(EMAIL, "not an e-mail address such as it@district.example"))
    .max(MAX_CONTACT_EMAILS, `at most ${MAX_CONTACT_EMAILS} addresses`),
  webhookUrl: z.string().trim().max(2000).nullish(),
  /** Dead letters of one endpoint that make the "dead letters over the threshold" notice; absent or null: the operator's threshold. */
  dlqThreshold: z.number().int().min(1).max(MAX_DLQ_THRESHOLD).nullish(),
});
export type TContacts = z.infer<typeof ZContacts>;

/** PUT /api/v1/notifications/settings: the operator's defaults for every district. */
export const ZNotificationSettings = z.strictObject({
  /** Dead letters of one endpoint that make the notice, for every district that set none of its own. */
  dlqThreshold: z.number().int().min(1).max(MAX_DLQ_THRESHOLD),
});
export type TNotificationSettings = z.infer<typeof ZNotificationSettings>;

/**
 * GET /api/v1/notifications (and the Notifications page's URL): `cursor` is a page's `nextCursor`, the page after it.
 * `before` (a createdAt: the notices strictly older) is the first version's paging, still read; it cannot page through
 * the notices of one instant, which a round of the notifier makes many of.
 */
/** Why a cursor is refused: by its shape here, by lib/ledger/sql/notifications.ts when it names no notice of the caller's. */
export const BAD_NOTIFICATION_CURSOR = "not a nextCursor this list answered; start again without cursor";

export const ZNotificationsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  // A notice's id (letters, digits, _ and -): anything else, a NUL byte among them, is no cursor rather than a statement error.
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, BAD_NOTIFICATION_CURSOR)
    .optional(),
  before: z.iso.datetime({ offset: true }).meta({ deprecated: true, description: "the notices strictly older than this createdAt; page with cursor" }).optional(),
  /** One tenant's notices; for a caller confined to a tenant, within its own (another tenant's: an empty list). */
  tenant: z.string().trim().min(1).max(200).meta({ description: "only this tenant's notices" }).optional(),
});
