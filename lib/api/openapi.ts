// The OpenAPI 3.1 description of /api/v1 (served at GET /api/v1/openapi.json),
// generated from the zod schemas the routes validate with: z.toJSONSchema turns
// each into JSON Schema 2020-12, which is OpenAPI 3.1's schema dialect, so the
// document cannot disagree with what a route accepts. The public routes'
// answers are described by lib/api/views.ts, which tests check against the
// routes' real answers; the dashboard's own read model and this document say
// "an object". The registry below names
// every route once; test/api/openapi.test.ts fails if a route file has no entry, an
// entry no route file, or a permission differs from the route's apiRoute rule.
import "server-only";
import { z } from "zod";
import type { Permission } from "../auth/permissions";
import { ZCreateEvent } from "../events/event-input";
import { MAX_BATCH_EVENTS, ZApiError, ZBatchDelivery, ZPublishBatch, ZPublishBatchQuery, ZPublishBatchResponse } from "../events/batch";
import { ZCreateSubscription, ZListSubscriptions, ZUpdateSubscription } from "../subscriptions/subscription-input";
import { ZRotateSecret } from "../subscriptions/rotation";
import { ZArchiveSubscription } from "../subscriptions/archive";
import { ZTestSend } from "../net/test-send";
import { ZListDeliveries } from "../deliveries/queries";
import { ZBackfill, ZCancelRedrive, ZCreateRedrive, ZListRedrives, ZRecover, ZRedriveDelivery } from "../redrive/redrive-input";
import { ZBulkResolve, ZResendDelivery, ZResolveDelivery } from "../resolve/resolve-input";
import { ZCreateErasure } from "../erasure/erasure-input";
import { ZRetentionOverride, ZRunRetention } from "../retention/retention-input";
import { ZCreateTenant, ZListTenants } from "../tenants/tenant-input";
import { ZContacts, ZNotificationSettings, ZNotificationsQuery } from "../notify/input";
import { ZCreatePortalSession } from "../portal/portal-input";
import { ZCreateEventType, ZUpdateEventType } from "../catalog/event-type-input";
import { ZDlqHistory, ZDlqQuery } from "../dashboard/dead-letters";
import { ZLookup } from "../dashboard/lookup";
import { ZRange, ZSubscriptionDeliveries } from "../dashboard/subscriptions";
import {
  ZBackfillPreview,
  ZBulkResolved,
  ZDeliveryPage,
  ZDeliveryRedriven,
  ZDeliveryView,
  ZDeliveryWithAttempts,
  ZDlqHistoryView,
  ZDlqSummary,
  ZErasureReceipt,
  ZEventTypeDeleted,
  ZEventTypeList,
  ZEventTypeView,
  ZRecoverPreview,
  ZRedriveBatchList,
  ZRedriveBatchProgress,
  ZRedriveBatchView,
  ZRedrivePreview,
  ZResolvePreview,
  ZRetentionOverview,
  ZRetentionPolicyView,
  ZRetentionPreview,
  ZRetentionStarted,
  ZSecretList,
  ZSecretMeta,
  ZSecretRotated,
  ZSubscriptionArchived,
  ZSubscriptionCreated,
  ZSubscriptionList,
  ZSubscriptionView,
  ZTenantList,
  ZTenantView,
  ZContactsView,
  ZNotificationList,
  ZNotificationSettingsView,
  ZPortalSessionRevoked,
  ZPortalSessionView,
  ZTestSendList,
  ZTestSendView,
} from "./views";

export type HttpMethod = "get" | "post" | "patch" | "put" | "delete";

export type ApiOperation = {
  path: string;
  method: HttpMethod;
  /** The apiRoute permission, or null for a route that answers without credentials. */
  permission: Permission | null;
  summary: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  bodyRequired?: boolean;
  status: number;
  response?: z.ZodType;
  responseDescription: string;
  /** Another success the route answers with (a dry run's 200 beside a create's 201). */
  also?: { status: number; response: z.ZodType; description: string };
};

const ZPublishResponse = z.object({ eventId: z.string(), deliveries: z.array(ZBatchDelivery) });
const ZErrorBody = z.object({ error: ZApiError });
const ZHealthPage = z.object({ items: z.array(z.record(z.string(), z.unknown())), nextCursor: z.string().nullable(), prevCursor: z.string().nullable() });
const ZObject = z.record(z.string(), z.unknown());

// Query schemas that routes declare inline (a single optional filter each).
const ZRangeQuery = z.object({ range: ZRange.optional() }).strict();

/** Every /api/v1 route: one entry per route file and exported method. */
export const API_OPERATIONS: ApiOperation[] = [
  {
    path: "/api/v1/openapi.json",
    method: "get",
    permission: null,
    summary: "This document.",
    status: 200,
    response: ZObject,
    responseDescription: "The OpenAPI 3.1 document.",
  },
  {
    path: "/api/v1/events",
    method: "post",
    permission: "events.publish",
    summary: "Publish one event: one delivery per matching subscription.",
    body: ZCreateEvent,
    status: 202,
    response: ZPublishResponse,
    responseDescription: "Created. The same id again answers 200 with the same deliveries; another type under the same id is a 409.",
  },
  {
    path: "/api/v1/events/batch",
    method: "post",
    permission: "events.publish",
    summary: `Publish 1–${MAX_BATCH_EVENTS} events; each is validated and answered on its own, in order.`,
    query: ZPublishBatchQuery,
    body: ZPublishBatch,
    status: 200,
    response: ZPublishBatchResponse,
    responseDescription:
      "One result per event: {index, id, status, deliveries} (deliveries left out with deliveries=false) or {index, id?, error}. A bad envelope is a 400/413 that writes nothing.",
  },
  {
    path: "/api/v1/subscriptions",
    method: "get",
    permission: "subscriptions.read",
    summary:
      "List subscriptions a page at a time (archived ones too with archived=true): q searches name, id, URL and tenant (case-insensitive); sort orders by name, tenant, state or created (a leading - reverses); cursor is a page's nextCursor (the page after it) or prevCursor (the page before).",
    query: ZListSubscriptions,
    status: 200,
    response: ZSubscriptionList,
    responseDescription: "{items, nextCursor, prevCursor}: nextCursor is null on the last page, prevCursor on the first.",
  },
  {
    path: "/api/v1/subscriptions",
    method: "post",
    permission: "subscriptions.create",
    summary: "Create a subscription; its signing secret is answered this once.",
    body: ZCreateSubscription,
    status: 201,
    response: ZSubscriptionCreated,
    responseDescription: "The subscription with `secret`.",
  },
  {
    path: "/api/v1/subscriptions/{id}",
    method: "get",
    permission: "subscriptions.read",
    summary: "One subscription.",
    status: 200,
    response: ZSubscriptionView,
    responseDescription: "The subscription.",
  },
  {
    path: "/api/v1/subscriptions/{id}",
    method: "patch",
    permission: "subscriptions.update",
    summary: "Change a subscription (state changes need a reason).",
    body: ZUpdateSubscription,
    status: 200,
    response: ZSubscriptionView,
    responseDescription: "The subscription.",
  },
  {
    path: "/api/v1/subscriptions/{id}/secrets",
    method: "post",
    permission: "secrets.rotate",
    summary: "Rotate the signing secret, the old one valid for the overlap.",
    body: ZRotateSecret,
    status: 201,
    response: ZSecretRotated,
    responseDescription: "The new secret, shown this once.",
  },
  {
    path: "/api/v1/subscriptions/{id}/secrets",
    method: "get",
    permission: "subscriptions.read",
    summary: "The subscription's secrets as ids and validity windows.",
    status: 200,
    response: ZSecretList,
    responseDescription: "Secret metadata, newest first, never the secrets.",
  },
  {
    path: "/api/v1/subscriptions/{id}/test",
    method: "post",
    permission: "subscriptions.test",
    summary:
      "Send a signed hookledger.ping (or {eventId}: that event's stored bytes; {eventType}: the event catalog's example of a type the subscription takes) now, marked hookledger-test: 1; recorded as a test send, never a delivery.",
    body: ZTestSend,
    status: 200,
    response: ZTestSendView,
    responseDescription: "The endpoint's answer, also when it failed: status null and error when it did not answer.",
  },
  {
    path: "/api/v1/subscriptions/{id}/test",
    method: "get",
    permission: "subscriptions.read",
    summary: "The subscription's 20 most recent test sends, newest first.",
    status: 200,
    response: ZTestSendList,
    responseDescription: "Test sends with the endpoint's answers.",
  },
  {
    path: "/api/v1/subscriptions/{id}/secrets/{secretId}",
    method: "delete",
    permission: "secrets.expire",
    summary: "End a rotation's overlap early: the old secret stops signing now (409 for the newest secret).",
    status: 200,
    response: ZSecretMeta,
    responseDescription: "The secret's metadata, now expired.",
  },
  {
    path: "/api/v1/subscriptions/{id}/archive",
    method: "post",
    permission: "subscriptions.archive",
    summary: "Archive: no new deliveries, queued ones resolved as superseded, history kept (409 if already archived).",
    body: ZArchiveSubscription,
    status: 200,
    response: ZSubscriptionArchived,
    responseDescription: "The subscription with archivedAt, superseded and inFlight counts.",
  },
  {
    path: "/api/v1/subscriptions/{id}/unarchive",
    method: "post",
    permission: "subscriptions.archive",
    summary: "Unarchive: the subscription matches new events again (409 if not archived).",
    body: ZArchiveSubscription,
    status: 200,
    response: ZSubscriptionView,
    responseDescription: "The subscription.",
  },
  {
    path: "/api/v1/subscriptions/{id}/recover",
    method: "post",
    permission: "subscriptions.recover",
    summary:
      "Recover a window: the subscription's deliveries created in it (default states delivered, resolved, dead_letter) sent again as a paced batch (dryRun: the preview only).",
    body: ZRecover,
    status: 201,
    response: ZRedriveBatchView,
    responseDescription: "The running batch, kind recover, followed on /api/v1/redrives/{id}.",
    also: { status: 200, response: ZRecoverPreview, description: "dryRun: the preview, id null; nothing sent." },
  },
  {
    path: "/api/v1/subscriptions/{id}/backfill",
    method: "post",
    permission: "subscriptions.backfill",
    summary:
      "Backfill: deliveries created and sent, paced, for the window's matching events that have none for the subscription (409 when there is nothing left to create).",
    body: ZBackfill,
    status: 201,
    response: ZRedriveBatchView,
    responseDescription: "The running batch, kind backfill, followed on /api/v1/redrives/{id}.",
    also: { status: 200, response: ZBackfillPreview, description: "dryRun: the preview, id null; nothing created." },
  },
  {
    path: "/api/v1/deliveries",
    method: "get",
    permission: "deliveries.read",
    summary: "Find deliveries.",
    query: ZListDeliveries,
    status: 200,
    response: ZDeliveryPage,
    responseDescription: "{items, nextCursor}.",
  },
  {
    path: "/api/v1/deliveries/{id}",
    method: "get",
    permission: "deliveries.read",
    summary: "One delivery with its attempts.",
    status: 200,
    response: ZDeliveryWithAttempts,
    responseDescription: "The delivery.",
  },
  {
    path: "/api/v1/deliveries/{id}/redrive",
    method: "post",
    permission: "deliveries.redrive",
    summary: "Redrive one dead-lettered delivery (or retry a scheduled one now).",
    body: ZRedriveDelivery,
    status: 200,
    response: ZDeliveryRedriven,
    responseDescription: "The delivery, due again, and whether it was redriven or (a scheduled one) retried now.",
  },
  {
    path: "/api/v1/deliveries/{id}/resolve",
    method: "post",
    permission: "deliveries.resolve",
    summary: "Resolve one dead letter: it will not be delivered, and why.",
    body: ZResolveDelivery,
    status: 200,
    response: ZDeliveryView,
    responseDescription: "The delivery, resolved.",
  },
  {
    path: "/api/v1/deliveries/{id}/resend",
    method: "post",
    permission: "deliveries.resend",
    summary: "Send a delivered (or resolved) delivery again: same key and bytes, a fresh signature.",
    body: ZResendDelivery,
    status: 200,
    response: ZDeliveryView,
    responseDescription: "The delivery, pending again.",
  },
  {
    path: "/api/v1/dlq/resolve",
    method: "post",
    permission: "deliveries.resolve",
    summary: "Resolve the dead letters a filter matches (with dryRun: the preview only).",
    body: ZBulkResolve,
    status: 200,
    response: z.union([ZBulkResolved, ZResolvePreview]),
    responseDescription: "{id, status: resolved, resolved, resolution, filter}; with dryRun the preview, id null.",
  },
  {
    path: "/api/v1/erasures",
    method: "post",
    permission: "erasures.create",
    summary:
      "Erase a subject (e.g. one student id): its events lose payload, subject values and recorded answers; unfinished deliveries are resolved erased (dryRun: the counts only).",
    body: ZCreateErasure,
    status: 200,
    response: ZErasureReceipt,
    responseDescription: "The receipt (with dryRun: the counts, id null, status preview); never the value.",
  },
  {
    path: "/api/v1/retention",
    method: "get",
    permission: "retention.read",
    summary: "The retention policy (days, payload days, tenants' overrides), the oldest data kept, the last runs and the ledger tables' (and partitions') sizes.",
    status: 200,
    response: ZRetentionOverview,
    responseDescription: "{policy, oldest, runs, tables, partitions}.",
  },
  {
    path: "/api/v1/retention",
    method: "put",
    permission: "retention.manage",
    summary: "Set a tenant's retention override (retentionDays null: remove it); an unknown tenant or days below 1 or above 36,500 are a 400.",
    body: ZRetentionOverride,
    status: 200,
    response: ZRetentionPolicyView,
    responseDescription: "The policy as it now is.",
  },
  {
    path: "/api/v1/retention/run",
    method: "post",
    permission: "retention.manage",
    summary:
      "Start a retention run now: remove expired finished deliveries, their attempts and unneeded events, expunge old payloads. Answered 202 as it starts; GET /api/v1/retention shows its counts and its end. dryRun: 200 with the counts only, nothing changed. 409 while another run holds the lock.",
    body: ZRunRetention,
    status: 202,
    response: ZRetentionStarted,
    responseDescription: "The run's record as it starts (status running); GET /api/v1/retention shows its counts and its end.",
    also: { status: 200, response: ZRetentionPreview, description: "dryRun: the counts it would remove, id null, status preview; nothing changed or recorded." },
  },
  {
    path: "/api/v1/tenants",
    method: "get",
    permission: "tenants.manage",
    summary:
      "List tenants (districts) a page at a time, by id: q matches the id or the name (case-insensitive); cursor is a page's nextCursor. Admins; an admin confined to a tenant sees its own only.",
    query: ZListTenants,
    status: 200,
    response: ZTenantList,
    responseDescription: "{items, nextCursor}: nextCursor is null on the last page.",
  },
  {
    path: "/api/v1/tenants",
    method: "post",
    permission: "tenants.manage",
    summary: "Register a tenant: {id, name}. 409 if the id exists; global admins only.",
    body: ZCreateTenant,
    status: 201,
    response: ZTenantView,
    responseDescription: "The tenant.",
  },
  {
    path: "/api/v1/tenants/{id}/contacts",
    method: "get",
    permission: "contacts.read",
    summary:
      "Whom the tenant's notifications go to and when: {emails, webhookUrl, dlqThreshold, defaultDlqThreshold} (dlqThreshold null: the operator's threshold, defaultDlqThreshold). A principal confined to another tenant gets 404.",
    status: 200,
    response: ZContactsView,
    responseDescription: "The contacts (empty when none were set).",
  },
  {
    path: "/api/v1/tenants/{id}/contacts",
    method: "put",
    permission: "contacts.update",
    summary:
      "Replace the tenant's notification contacts: {emails: [at most 20 addresses], webhookUrl?, dlqThreshold?} (webhookUrl: a Slack-compatible incoming webhook, checked like an endpoint URL: a private address is a 400; dlqThreshold: 1 to 100000 dead letters of one endpoint that make hookledger.dlq.threshold_exceeded and the district's notice, absent or null for the operator's threshold). A malformed address is a 400 naming body.emails.<index>, a threshold out of range one naming body.dlqThreshold; nothing is saved. A global admin for any tenant; a district's manager for its own (another tenant: 404).",
    body: ZContacts,
    status: 200,
    response: ZContactsView,
    responseDescription: "The contacts as saved.",
  },
  {
    path: "/api/v1/notifications",
    method: "get",
    permission: "notifications.read",
    summary:
      "The notifications sent to districts (endpoint paused, disabled, recovered; dead letters over the threshold or waiting over a day; a signing secret's overlap ending), newest first: to whom, what, when, and sent or why not. A principal confined to a tenant sees its own. tenant= lists one tenant's (for a confined principal, another tenant's is an empty list). A page at a time (ties in createdAt ordered by id): ?limit= (1–500, default 100); cursor is a page's nextCursor (the page after it). A cursor that is not one this list answered (or one of another tenant's, or outside the tenant= asked for) is a 400 naming query.cursor. before=<createdAt> (the notices strictly older than it) is the first version's paging, still read; it skips the other notices of the instant a page ended in.",
    query: ZNotificationsQuery,
    status: 200,
    response: ZNotificationList,
    responseDescription:
      "{items, nextCursor, nextBefore}: nextCursor (null on the last page) is the cursor of the next page; nextBefore (null there too) is the page's last createdAt, for the first version's before.",
  },
  {
    path: "/api/v1/notifications/settings",
    method: "get",
    permission: "notifications.read",
    summary:
      "The operator's notification defaults: {dlqThreshold}, the dead letters of one endpoint that make the notice for every district that set no threshold of its own.",
    status: 200,
    response: ZNotificationSettingsView,
    responseDescription: "The defaults.",
  },
  {
    path: "/api/v1/notifications/settings",
    method: "put",
    permission: "notifications.manage",
    summary:
      "Set the operator's notification defaults: {dlqThreshold} (1 to 100000). Global admins. Audited notifications.settings.update with the value before and after; the same value again writes nothing. Out of range: 400 naming body.dlqThreshold, nothing saved.",
    body: ZNotificationSettings,
    status: 200,
    response: ZNotificationSettingsView,
    responseDescription: "The defaults as saved.",
  },
  {
    path: "/api/v1/portal/sessions",
    method: "post",
    permission: "portal.sessions.create",
    summary:
      "Mint a district portal link: {tenant, subscriptionId?, readOnly?, expiresInSeconds? (default 3600, at most 86400)}. Opening url once signs that browser in as the district (its manager's rights, a support agent's when readOnly; one subscription only when subscriptionId is given) until expiresAt. Global admins and portal tokens; 404 for an unknown tenant, 400 for a subscription that is not the tenant's.",
    body: ZCreatePortalSession,
    status: 201,
    response: ZPortalSessionView,
    responseDescription: "The link (shown once: only its hash is stored) and when it and its session end.",
  },
  {
    path: "/api/v1/portal/sessions/{id}",
    method: "delete",
    permission: "portal.sessions.revoke",
    summary: "Revoke a portal link: it no longer opens, and a browser session opened from it ends at its next request. Revoking twice answers the same.",
    status: 200,
    response: ZPortalSessionRevoked,
    responseDescription: "The session's id and when it was revoked.",
  },
  {
    path: "/api/v1/event-types",
    method: "get",
    permission: "event_types.read",
    summary:
      "The event catalog: every type with its description, JSON Schema, example, summary fields, whether it is deprecated, and which of your subscriptions take it.",
    status: 200,
    response: ZEventTypeList,
    responseDescription: "The catalogued types, by name.",
  },
  {
    path: "/api/v1/event-types",
    method: "post",
    permission: "event_types.manage",
    summary:
      "Catalogue an event type: {type, description, schema?, example?, summaryFields?}. A schema that does not compile is a 400 naming `schema`; an example that does not match it a 400 naming `example`; 409 if catalogued already. Global engineers and admins.",
    body: ZCreateEventType,
    status: 201,
    response: ZEventTypeView,
    responseDescription: "The type as catalogued.",
  },
  {
    path: "/api/v1/event-types/{type}",
    method: "get",
    permission: "event_types.read",
    summary: "One catalogued type; 404 if it is not in the catalog.",
    status: 200,
    response: ZEventTypeView,
    responseDescription: "The type.",
  },
  {
    path: "/api/v1/event-types/{type}",
    method: "put",
    permission: "event_types.manage",
    summary: "Change a catalogued type: the fields given are set (schema or example null removes it; deprecated false brings it back). 404 for an unknown type.",
    body: ZUpdateEventType,
    status: 200,
    response: ZEventTypeView,
    responseDescription: "The type as changed.",
  },
  {
    path: "/api/v1/event-types/{type}",
    method: "delete",
    permission: "event_types.manage",
    summary: "Delete a type from the catalog; a type that has events is kept and marked deprecated instead (it still publishes). 200 either way, saying which.",
    status: 200,
    response: ZEventTypeDeleted,
    responseDescription: "Whether the type was deleted or deprecated.",
  },
  {
    path: "/api/v1/dlq",
    method: "get",
    permission: "dlq.read",
    summary: "The dead-letter queue's summary.",
    query: ZDlqQuery,
    status: 200,
    response: ZDlqSummary,
    responseDescription: "Depth and oldest age, by subscription and reason, counted now; the groups a redrive filters on.",
  },
  {
    path: "/api/v1/dlq/history",
    method: "get",
    permission: "dlq.read",
    summary: "DLQ depth and oldest age over time.",
    query: ZDlqHistory,
    status: 200,
    response: ZDlqHistoryView,
    responseDescription: "The sampled series.",
  },
  {
    path: "/api/v1/redrives",
    method: "post",
    permission: "redrives.create",
    summary: "A bulk redrive (with dryRun: the preview only).",
    body: ZCreateRedrive,
    status: 201,
    response: ZRedriveBatchView,
    responseDescription: "The running batch.",
    also: { status: 200, response: ZRedrivePreview, description: "dryRun: the preview (count, sample, what is held back), id null." },
  },
  {
    path: "/api/v1/redrives",
    method: "get",
    permission: "dlq.read",
    summary:
      "List paced batches (redrive, recover, backfill) a page at a time, newest first, of one status or kind if asked; cursor is a page's nextCursor (older batches) or prevCursor (newer).",
    query: ZListRedrives,
    status: 200,
    response: ZRedriveBatchList,
    responseDescription: "{items, nextCursor, prevCursor}: nextCursor is null on the last page, prevCursor on the first.",
  },
  {
    path: "/api/v1/redrives/{id}",
    method: "get",
    permission: "dlq.read",
    summary: "A bulk redrive's progress.",
    status: 200,
    response: ZRedriveBatchProgress,
    responseDescription: "The batch.",
  },
  {
    path: "/api/v1/redrives/{id}/cancel",
    method: "post",
    permission: "redrives.cancel",
    summary: "Stop a running bulk redrive where it is.",
    body: ZCancelRedrive,
    bodyRequired: false,
    status: 200,
    response: ZRedriveBatchView,
    responseDescription: "The batch, cancelled.",
  },
  {
    path: "/api/v1/dashboard/lookup",
    method: "get",
    permission: "deliveries.read",
    summary: "The dashboard's one-box lookup.",
    query: ZLookup.strict(),
    status: 200,
    response: ZObject,
    responseDescription:
      "Matches: {q, deliveries (each with its attempts and its event's subject), subscriptions (the first 20), truncated, subscriptionsTruncated (more subscriptions match), unrouted (events q names that no subscription took: {id, type, tenant, receivedAt, subject})}.",
  },
  {
    path: "/api/v1/dashboard/redrives",
    method: "get",
    permission: "dlq.read",
    summary: "The Redrives page's list: a page of batches (the query of GET /api/v1/redrives) with their subscriptions' names.",
    query: ZListRedrives,
    status: 200,
    response: ZObject,
    responseDescription: "{items, nextCursor, prevCursor, names}: names are the names of the subscriptions the batches' filters name, by id, those the caller may see.",
  },
  {
    path: "/api/v1/dashboard/deliveries/{id}",
    method: "get",
    permission: "deliveries.read",
    summary: "Delivery detail for the dashboard.",
    status: 200,
    response: ZObject,
    responseDescription:
      "The delivery with its attempts, its event's subject, its history (audit rows; a fixed_at_source resolve names correctedEventId in its details), corrections (resolutions of other dead letters naming this event as their corrected one), the request headers and the payload.",
  },
  {
    path: "/api/v1/dashboard/subscriptions",
    method: "get",
    permission: "subscriptions.read",
    summary: "A page of subscriptions with their health (the query of GET /api/v1/subscriptions).",
    query: ZListSubscriptions,
    status: 200,
    response: ZHealthPage,
    responseDescription: "{items: health rows, nextCursor, prevCursor}.",
  },
  {
    path: "/api/v1/dashboard/subscriptions/{id}",
    method: "get",
    permission: "subscriptions.read",
    summary: "One subscription's health and outcomes.",
    query: ZRangeQuery,
    status: 200,
    response: ZObject,
    responseDescription: "The overview.",
  },
  {
    path: "/api/v1/dashboard/subscriptions/{id}/answers",
    method: "get",
    permission: "subscriptions.read",
    summary: "What the endpoint has been answering.",
    status: 200,
    response: ZObject,
    responseDescription: "Answer groups.",
  },
  {
    path: "/api/v1/dashboard/subscriptions/{id}/deliveries",
    method: "get",
    permission: "deliveries.read",
    summary: "The subscription's deliveries, newest first.",
    query: ZSubscriptionDeliveries.omit({ subscriptionId: true }).strict(),
    status: 200,
    response: ZObject,
    responseDescription: "A page of deliveries.",
  },
];

const ERROR_STATUSES: Record<string, string> = {
  "400": "Bad input (validation_failed, invalid_json, bad_request); nothing changed.",
  "401": "Missing or invalid credentials.",
  "403": "The role may not do this.",
  "404": "Not found.",
  "409": "Conflicts with the current state.",
  "413": "The body is over the size limit.",
  "415": "The body is not application/json.",
  "429": "Rate limited; Retry-After says when to try again.",
  "503": "Unavailable; try again.",
};

function schema(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  // Refinements (regex lookarounds aside) have no JSON Schema form; they stay the route's business and answer 400.
  const out = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

let cached: Record<string, unknown> | undefined;

/** The document (built once per process). */
export function openApiDocument(version = "0.1.0"): Record<string, unknown> {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of API_OPERATIONS) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const queryParams = op.query
      ? Object.entries((schema(op.query, "input").properties ?? {}) as Record<string, unknown>).map(([name, s]) => ({ name, in: "query", required: false, schema: s }))
      : [];
    const errors = Object.fromEntries(
      Object.entries(ERROR_STATUSES)
        .filter(([code]) => op.permission !== null && (op.body || !["413", "415"].includes(code)))
        .map(([code]) => [code, { $ref: `#/components/responses/E${code}` }] as const),
    );
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      operationId: `${op.method}${op.path
        .replace(/^\/api\/v1/, "")
        .replace(/[{}]/g, "")
        .replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      summary: op.summary,
      ...(op.permission ? { "x-hookledger-permission": op.permission } : { security: [] }),
      ...(pathParams.length || queryParams.length ? { parameters: [...pathParams, ...queryParams] } : {}),
      ...(op.body ? { requestBody: { required: op.bodyRequired ?? true, content: { "application/json": { schema: schema(op.body, "input") } } } } : {}),
      responses: {
        [String(op.status)]: {
          description: op.responseDescription,
          ...(op.response ? { content: { "application/json": { schema: schema(op.response, "output") } } } : {}),
        },
        ...(op.also
          ? { [String(op.also.status)]: { description: op.also.description, content: { "application/json": { schema: schema(op.also.response, "output") } } } }
          : {}),
        ...errors,
      },
    };
  }
  cached = {
    openapi: "3.1.0",
    info: {
      title: "hookledger API",
      version,
      description:
        "Outbound webhook delivery: publish events, manage subscriptions, inspect and redrive deliveries. Every error answers {error: {code, message, details}}.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "`npx hookledger token create --role <role>`" } },
      schemas: { Error: schema(ZErrorBody, "output") },
      responses: Object.fromEntries(
        Object.entries(ERROR_STATUSES).map(([code, description]) => [
          `E${code}`,
          { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
        ]),
      ),
    },
  };
  return cached;
}
