// The shapes the API answers with, for the OpenAPI document's response
// schemas (lib/api/openapi.ts) and the typed client's readers: a subscription,
// a delivery and its attempts, and the answers of the operators' routes
// (secrets, test sends, redrives, recover and backfill, resolve, the DLQ,
// tenants, retention, erasures). test/api/openapi.test.ts and
// test/api/openapi-views.test.ts parse real answers of the routes with these
// schemas and compare the result with the answer, and check at compile time
// that each schema's type and its service's return type accept each other, so
// a field added to or dropped from a view (lib/subscriptions/manage-subscriptions.ts
// toSubscriptionView, lib/ledger/read/types.ts, whose schema the delivery views pick from,
// the services the routes call) fails there until this file says so too.
import "server-only";
import { z } from "zod";
import { BATCH_STATUSES, RESOLUTIONS, SUBSCRIPTION_STATES } from "../ledger/states";
import { ZAttemptRecord, ZDeadLetterSample, ZDeliveryRecord, ZRecoverSample, ZRedriveSample } from "../ledger/read/types";
import { ZFailurePolicy, ZRetryPolicy } from "../subscriptions/subscription-input";
import { BATCH_KINDS, RECOVER_STATES, ZRedriveFilter } from "../redrive/redrive-input";

const time = z.string().describe("ISO 8601, UTC");
const maybeTime = time.nullable();

/** A delivery as the public API returns it: a pick of the ledger's one shape (lib/ledger/read/types.ts). */
export const ZDeliveryView = ZDeliveryRecord.pick({
  id: true,
  deliveryKey: true,
  eventId: true,
  eventType: true,
  subscriptionId: true,
  state: true,
  attemptCount: true,
  totalAttempts: true,
  nextAttemptAt: true,
  lastAttemptAt: true,
  lastStatusCode: true,
  lastErrorClass: true,
  lastErrorMessage: true,
  deadLetterReason: true,
  deadLetteredAt: true,
  deliveredAt: true,
  createdAt: true,
  resolution: true,
});
export type DeliveryView = z.infer<typeof ZDeliveryView>;

export const ZDeliveryPage = z.object({ items: z.array(ZDeliveryView), nextCursor: z.string().nullable() });
export const ZDeliveryWithAttempts = ZDeliveryView.extend({ attempts: z.array(ZAttemptRecord) });

export const ZSubscriptionView = z.object({
  id: z.string(),
  name: z.string(),
  tenant: z.string().nullable(),
  url: z
    .string()
    .describe(
      "the endpoint URL. As stored for a caller holding subscriptions.update; for a read-only caller with its credentials masked: a userinfo password and the values of credential-named query parameters (code, token, sig, key, apikey, api_key, access_token, secret, password, signature, auth, and names ending in token, secret, password, signature or apikey; any case) read ****. Send back a masked URL and it is refused (400), except the masked form of the stored URL itself, which leaves the stored one as it is",
    ),
  eventTypes: z.array(z.string()),
  state: z.enum(SUBSCRIPTION_STATES),
  stateReason: z.string().nullable(),
  retryPolicy: ZRetryPolicy.nullable(),
  rateLimitPerSecond: z.number().nullable(),
  maxConcurrency: z.number().int(),
  createdAt: time,
  updatedAt: time,
  headers: z.record(z.string(), z.string()).nullable().describe("header names with masked values; never the values"),
  tls: z.union([
    z.object({ set: z.literal(false) }),
    z
      .object({
        set: z.literal(true),
        subject: z.string().nullable(),
        issuer: z.string().nullable(),
        expiresAt: maybeTime,
        fingerprint256: z.string().nullable(),
        ca: z.boolean(),
      })
      .describe("the client certificate's subject, issuer, expiry and fingerprint (null when only a CA is set), and whether a CA bundle is trusted"),
  ]),
  pausedReason: z.enum(["manual", "failing"]).nullable(),
  pausedAt: maybeTime,
  failurePolicy: ZFailurePolicy.nullable(),
  health: z.object({
    failingSince: maybeTime,
    failedAttempts: z.number().int(),
    lastProbe: z.object({ at: time, status: z.number().int().nullable(), error: z.string().nullable(), latencyMs: z.number().nullable() }).nullable(),
    nextProbeAt: maybeTime,
    probeCount: z.number().int(),
    heldUntil: maybeTime.describe(
      "until when the endpoint asked to be left alone (Retry-After on a 429 or 503, at most an hour): nothing is sent to it before then; null when not held",
    ),
  }),
  archivedAt: maybeTime,
  archiveReason: z.string().nullable(),
  archivedBy: z.string().nullable(),
});

/** A page of subscriptions; nextCursor (null on the last page) asks for the next, prevCursor (null on the first) for the one before. */
export const ZSubscriptionList = z.object({ items: z.array(ZSubscriptionView), nextCursor: z.string().nullable(), prevCursor: z.string().nullable() });
/** A create's answer: the signing secret, this once. */
export const ZSubscriptionCreated = ZSubscriptionView.extend({ secret: z.string() });

/** Archive's answer: the subscription and what its archiving did to its queue. */
export const ZSubscriptionArchived = ZSubscriptionView.extend({
  superseded: z.number().int().describe("pending and scheduled deliveries now resolved as superseded"),
  inFlight: z.number().int().describe("deliveries on the wire, which finish and are recorded"),
});

/** The single-delivery redrive's answer: the delivery as it now is, and whether it was redriven or (a scheduled one) made due now. */
export const ZDeliveryRedriven = ZDeliveryView.extend({ redrive: z.object({ action: z.enum(["redrive", "retry_now"]) }) });

// Signing secrets: ids and validity windows; a value only in a rotation's answer, that once.
export const ZSecretMeta = z.object({ id: z.string(), createdAt: time, expiresAt: maybeTime.describe("null: signs until a rotation ends it"), active: z.boolean() });
export const ZSecretList = z.object({ items: z.array(ZSecretMeta) });
export const ZSecretRotated = z.object({
  id: z.string(),
  subscriptionId: z.string(),
  secret: z.string().describe("the new whsec_ secret, shown this once"),
  createdAt: time,
  overlapSeconds: z.number().int(),
  previous: z.array(ZSecretMeta).describe("the older secrets, newest first, with the end of their overlap"),
});

export const ZTestSendView = z.object({
  id: z.string(),
  status: z.number().int().nullable().describe("the endpoint's HTTP status; null when it did not answer"),
  latencyMs: z.number(),
  headers: z.record(z.string(), z.string()).nullable(),
  body: z.string().nullable().describe("the answer's first 4 KB, credentials masked"),
  error: z.string().nullable(),
  errorClass: z.string().nullable(),
  eventId: z.string().nullable().describe("the stored event sent; null for a ping"),
  eventType: z.string(),
  url: z.string().describe("the URL sent to, its credentials masked (****) as a read-only caller sees the subscription's"),
  actor: z.string(),
  sentAt: time,
});
export const ZTestSendList = z.object({ items: z.array(ZTestSendView) });

// Bulk redrives, recovers and backfills: one batch record for the three kinds.
const ZWindowFilter = z.strictObject({ subscriptionId: z.string(), since: time, until: time, states: z.array(z.enum(RECOVER_STATES)).optional() });
export const ZRedriveBatchView = z.object({
  id: z.string(),
  kind: z.enum(BATCH_KINDS),
  status: z.enum(BATCH_STATUSES).describe("running, then done or cancelled"),
  filter: z.union([ZRedriveFilter, ZWindowFilter]).describe("a redrive's dead-letter filter, or a recover's or backfill's window"),
  reason: z.string(),
  actor: z.string(),
  ratePerSecond: z.number(),
  latestStateWins: z.boolean(),
  matched: z.number().int(),
  redriven: z.number().int().describe("for a recover the deliveries sent again, for a backfill the deliveries created"),
  skipped: z.number().int(),
  remaining: z.number().int(),
  cancelledBy: z.string().nullable(),
  createdAt: time,
  updatedAt: time,
  finishedAt: maybeTime,
  settledAt: maybeTime.describe("when none of a done or cancelled batch's deliveries was still on its way any more (null until then, and for a running batch)"),
});
export const ZRedriveBatchListItem = ZRedriveBatchView.extend({
  inProgress: z
    .number()
    .int()
    .nullable()
    .describe(
      "a done or cancelled batch's deliveries still on their way (queued, being sent or retrying; a cancel stops moving items, not those already moved): counted until it is settled, then 0; null for a running batch",
    ),
});
export const ZRedriveBatchList = z.object({ items: z.array(ZRedriveBatchListItem), nextCursor: z.string().nullable(), prevCursor: z.string().nullable() });
export const ZRedriveBatchProgress = ZRedriveBatchView.extend({
  deliveredSince: z.number().int(),
  failedAgain: z.number().int(),
  inProgress: z.number().int(),
  skippedBy: z.object({ notDeadLettered: z.number().int(), subscriptionInactive: z.number().int(), superseded: z.number().int() }),
  skippedByOutcome: z.record(z.string(), z.number().int()).describe("every skipped item by its recorded outcome (skipped_in_progress, skipped_exists, …)"),
  etaSeconds: z.number().int().nullable().describe("running batches only"),
});

/** A dry run's answer: nothing recorded, so no id. */
const preview = { id: z.null(), status: z.literal("preview") };
export const ZRedrivePreview = z.object({
  ...preview,
  matched: z.number().int(),
  superseded: z.number().int().nullable().describe("of matched, how many latestStateWins would skip now (null unless asked)"),
  oldestDeadLetteredAt: maybeTime,
  newestDeadLetteredAt: maybeTime,
  sample: z.array(ZRedriveSample),
  held: z
    .array(z.object({ subscriptionId: z.string(), state: z.string(), count: z.number().int(), message: z.string() }))
    .describe("matching dead letters of paused or disabled subscriptions: not included"),
  permanent: z
    .object({
      count: z.number().int().describe("of matched, how many the receiver rejected as permanent (a 4xx): sent again unchanged, they get the same answer"),
      answers: z
        .array(
          z.object({
            subscriptionId: z.string(),
            subscriptionName: z.string(),
            statusCode: z.number().int().nullable(),
            count: z.number().int(),
            excerpt: z.string().nullable().describe("one example's last answer, its first 200 characters"),
          }),
        )
        .describe("who answered what, most first, at most 3 groups"),
    })
    .describe("permanent rejections among the matches: resolve them, or fix the data at the source and publish it again, rather than redrive"),
});
export const ZRecoverPreview = z.object({
  ...preview,
  kind: z.literal("recover"),
  subscriptionId: z.string(),
  since: time,
  until: time,
  states: z.array(z.enum(RECOVER_STATES)),
  matched: z.number().int(),
  byState: z.record(z.string(), z.number().int()),
  oldestCreatedAt: maybeTime,
  newestCreatedAt: maybeTime,
  sample: z.array(ZRecoverSample),
});
export const ZBackfillPreview = z.object({
  ...preview,
  kind: z.literal("backfill"),
  subscriptionId: z.string(),
  since: time,
  until: time,
  matched: z.number().int(),
  oldestReceivedAt: maybeTime,
  newestReceivedAt: maybeTime,
  sample: z.array(z.object({ eventId: z.string(), eventType: z.string(), occurredAt: time, receivedAt: time })),
});
export const ZResolvePreview = z.object({
  ...preview,
  matched: z.number().int(),
  oldestDeadLetteredAt: maybeTime,
  newestDeadLetteredAt: maybeTime,
  sample: z.array(ZDeadLetterSample),
});
export const ZBulkResolved = z.object({
  id: z.string(),
  status: z.literal("resolved"),
  resolution: z.enum(RESOLUTIONS),
  resolved: z.number().int(),
  filter: ZRedriveFilter,
});

// The DLQ, counted now; its sampled history.
const depth = { depth: z.number().int(), oldestAgeSeconds: z.number().nullable() };
export const ZDlqSummary = z.object({
  ...depth,
  countedAt: time,
  groupsSampledAt: maybeTime.describe("set when some groups are the sampler's: that sample's time"),
  bySubscription: z.array(z.object({ subscriptionId: z.string(), subscriptionName: z.string().nullable(), ...depth })),
  byReason: z.array(z.object({ reason: z.string().nullable(), ...depth })),
  bySubscriptionAndReason: z.array(z.object({ subscriptionId: z.string(), reason: z.string().nullable(), ...depth })),
  groups: z.array(
    z.object({
      subscriptionId: z.string(),
      subscriptionName: z.string().nullable(),
      reason: z.string().nullable(),
      errorClass: z.string().nullable(),
      statusCode: z.number().int().nullable(),
      depth: z.number().int(),
      oldestAt: maybeTime,
      sampledAt: maybeTime.describe("null: counted now; else the time of the sample this group was read from"),
    }),
  ),
  subscriptionCount: z.number().int().describe("subscriptions with dead letters; bySubscription lists fewer with ?q= or ?limit="),
  matchingSubscriptionCount: z.number().int().describe("of those, how many match ?q= (all of them without it)"),
});
export const ZDlqHistoryView = z.object({
  bucketSeconds: z.number().int(),
  points: z.array(z.object({ at: time, depth: z.number().int(), oldestAgeSeconds: z.number().nullable() })),
  gaps: z
    .array(z.object({ from: time, to: time }))
    .describe("stretches with no sample (nothing was running to take one): from the last point before to the first after; depth and age there are unknown"),
});

export const ZTenantView = z.object({ id: z.string(), name: z.string(), createdAt: time });
export const ZTenantList = z.object({ items: z.array(ZTenantView), nextCursor: z.string().nullable() });

// Notifications to districts (lib/notify/contacts.ts, lib/ledger/sql/notifications.ts).
export const ZContactsView = z.object({
  tenant: z.string(),
  emails: z.array(z.string()),
  webhookUrl: z.string().nullable(),
  /** The district's own dead-letter threshold; null: the operator's, `defaultDlqThreshold`. */
  dlqThreshold: z.number().int().nullable(),
  /** The operator's threshold (ops_settings), what applies while `dlqThreshold` is null. */
  defaultDlqThreshold: z.number().int(),
  updatedAt: time.nullable(),
  updatedBy: z.string().nullable(),
});
export const ZNotificationSettingsView = z.object({ dlqThreshold: z.number().int() });
export const ZNotificationView = z.object({
  id: z.string(),
  tenant: z.string(),
  subscriptionId: z.string().nullable(),
  kind: z.enum(["paused", "disabled", "recovered", "dlq_threshold", "dlq_old", "secret_expiring"]),
  /** none: the district had no contacts, so nobody was told (status unaddressed, recipient ""). */
  channel: z.enum(["email", "webhook", "none"]),
  recipient: z.string(),
  subject: z.string(),
  status: z.enum(["pending", "sent", "failed", "suppressed", "unaddressed"]),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  digestCount: z.number().int(),
  createdAt: time,
  sentAt: time.nullable(),
  nextAttemptAt: time.nullable(),
});
/** A page of notices, newest first by (createdAt, id): nextCursor (null on the last page) asks for the next; nextBefore is the first version's paging, kept for its callers. */
export const ZNotificationList = z.object({
  items: z.array(ZNotificationView),
  nextCursor: z.string().nullable(),
  nextBefore: time
    .nullable()
    .meta({ deprecated: true, description: "the page's last createdAt (ISO 8601, UTC), for before=; null on the last page. Page with nextCursor" }),
});

/** A district portal link (lib/portal): `url` opens once and signs that browser in as the district until expiresAt. */
export const ZPortalSessionView = z.object({
  id: z.string(),
  url: z.string().describe("Open once: signs the browser in as the district. Hand it over or put it in an iframe; do not log it."),
  expiresAt: time,
  tenant: z.string(),
  subscriptionId: z.string().nullable(),
  readOnly: z.boolean(),
});
export const ZPortalSessionRevoked = z.object({ id: z.string(), revokedAt: time });

// The event catalog (lib/catalog/manage-event-types.ts): global types, each with the caller's subscriptions taking it.
const jsonObject = z.record(z.string(), z.unknown());
export const ZEventTypeView = z.object({
  type: z.string(),
  description: z.string(),
  schema: jsonObject.nullable().describe("A JSON Schema (2020-12) the event's data must match at publish; null: any data."),
  example: jsonObject.nullable(),
  summaryFields: z.array(z.string()).describe("JSON Pointers into data that lookup cards show."),
  deprecated: z.boolean(),
  createdAt: time,
  updatedAt: time,
  subscriptions: z
    .array(z.object({ id: z.string(), name: z.string(), tenant: z.string().nullable(), state: z.string() }))
    .describe("The live subscriptions that take this type (naming it, or `*`), the first 50 by name; a tenant's principal sees its own only."),
  subscriptionCount: z.number().int().describe("How many live subscriptions take this type in all (subscriptions lists the first 50)."),
});
export const ZEventTypeList = z.object({ items: z.array(ZEventTypeView) });
export const ZEventTypeDeleted = z.object({ type: z.string(), deleted: z.boolean(), deprecated: z.boolean(), message: z.string() });

// Retention: the policy, its runs, the oldest data kept and the tables' sizes.
export const ZRetentionPolicyView = z.object({
  retentionDays: z.number().int(),
  payloadRetentionDays: z.number().int().nullable(),
  overrides: z.array(z.object({ tenant: z.string(), retentionDays: z.number().int(), payloadRetentionDays: z.number().int().nullable() })),
});
const retentionCounts = {
  deliveries: z.number().int(),
  attempts: z.number().int(),
  events: z.number().int(),
  expunged: z.number().int().describe("payloads replaced by the expunged tombstone"),
  partitions: z.number().int(),
};
/** A run as the API answers it: a dry run's counts, or the record of a run as it starts. */
export const ZRetentionReport = z.object({
  id: z.string().nullable(),
  dryRun: z.boolean(),
  trigger: z.enum(["schedule", "manual"]),
  by: z.string(),
  status: z.enum(["preview", "running", "finished", "stopped"]),
  policy: ZRetentionPolicyView,
  startedAt: time,
  finishedAt: maybeTime,
  durationMs: z.number(),
  ...retentionCounts,
});
export const ZRetentionPreview = ZRetentionReport.extend({ ...preview, dryRun: z.literal(true) });
export const ZRetentionStarted = ZRetentionReport.extend({ id: z.string(), dryRun: z.literal(false), status: z.literal("running"), finishedAt: z.null() });
export const ZRetentionOverview = z.object({
  policy: ZRetentionPolicyView,
  oldest: z.object({ event: maybeTime, delivery: maybeTime, attempt: maybeTime, finishedDelivery: maybeTime }).describe("the oldest row kept in each table; null: empty"),
  runs: z.array(
    z.object({
      id: z.string(),
      trigger: z.enum(["schedule", "manual"]),
      actor: z.string(),
      status: z.enum(["running", "finished", "failed"]),
      policy: ZRetentionPolicyView.describe("the policy the run applied"),
      error: z.string().nullable(),
      startedAt: time,
      finishedAt: maybeTime,
      ...retentionCounts,
    }),
  ),
  tables: z.array(z.object({ name: z.string(), rows: z.number().int().nullable().describe("the planner's estimate"), bytes: z.number() })),
  partitions: z.array(z.object({ table: z.string(), name: z.string(), from: maybeTime, to: maybeTime, rows: z.number().int().nullable(), bytes: z.number() })),
});

/** An erasure's receipt: the key, never the value. */
export const ZErasureReceipt = z.object({
  id: z.string().nullable().describe("er_…; null for a dry run"),
  dryRun: z.boolean(),
  status: z.enum(["preview", "finished"]),
  subjectKey: z.string(),
  tenant: z.string().nullable(),
  reason: z.string(),
  by: z.string(),
  startedAt: time,
  finishedAt: maybeTime,
  durationMs: z.number(),
  events: z.number().int(),
  opsEvents: z.number().int(),
  deliveries: z.number().int(),
  resolved: z.number().int(),
  attempts: z.number().int(),
  reasonsScrubbed: z.number().int().describe("operators' reasons and resolution texts the value was taken out of"),
  eventIdsWithValue: z.number().int().describe("erased events whose ids contain the value, which no erasure can change"),
});
