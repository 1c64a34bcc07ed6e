// The audit log's vocabulary, exported once: every action an operator (or the
// system) can take, the type of thing it acts on, and the shape of its
// details. The writer below only accepts an action from this list with
// details that match its schema, and the dashboard's audit filters render
// their options from these lists. Client-safe apart from the writer's
// type-only import of Tx, so the UI may import the names.
import { z } from "zod";
import type { Tx } from "./db/prisma";
import { RESOLUTIONS } from "./ledger/states";

/** audit_entries.target_type values. */
export const AUDIT_TARGET_TYPES = [
  "delivery",
  "subscription",
  "redrive_batch",
  "user",
  "api_token",
  "dlq",
  "erasure",
  "retention",
  "tenant",
  "event_type",
  "portal_session",
  "settings",
] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

const nullableString = z.string().nullable();
const redriveOne = z.strictObject({
  count: z.number().int(),
  subscriptionId: z.string(),
  eventId: z.string(),
  deliveryKey: z.string(),
  /** The delivery's state before the operator moved it. */
  from: z.string(),
  deadLetterReason: nullableString,
  lastErrorClass: nullableString,
  lastStatusCode: z.number().int().nullable(),
  /** The recover batch that sent it (absent for a single redrive). */
  batchId: z.string().optional(),
});
const resolveOne = z.strictObject({
  subscriptionId: z.string(),
  eventId: z.string(),
  deliveryKey: z.string(),
  resolution: z.enum(RESOLUTIONS),
  deadLetterReason: nullableString,
  /** The bulk resolve's id (its `dlq.resolve` row's target) when this row was resolved in bulk. */
  bulkId: nullableString,
  /** A fixed_at_source decision's corrected event (absent when none was named). */
  correctedEventId: z.string().optional(),
});
const resendOne = z.strictObject({
  subscriptionId: z.string(),
  eventId: z.string(),
  deliveryKey: z.string(),
  /** The delivery's state before the resend (delivered or resolved). */
  from: z.string(),
  /** The recover batch that sent it (absent for a single resend). */
  batchId: z.string().optional(),
});
const stateChange = z.strictObject({ from: z.string(), to: z.string() });
const batchWindow = z.strictObject({
  subscriptionId: z.string(),
  since: z.string(),
  until: z.string(),
  /** A recover's states (absent for a backfill). */
  states: z.array(z.string()).optional(),
  count: z.number().int(),
  ratePerSecond: z.number(),
});
const userDetails = z.strictObject({ email: z.string() });
const tokenDetails = z.strictObject({ name: z.string(), role: z.string(), tenant: z.string().nullable().optional() });

/**
 * Every audit action: the target type it is written with and a schema for its
 * details. Rows written by SQL inside ledger statements (the worker's 410
 * handling writes `subscription.disable`) use these names too; a test holds
 * every action string in the SQL to this list. `global`: the row never names a
 * tenant (it changes what every district shares), so no district's audit trail
 * holds one; writeAudit refuses a tenant for it.
 */
export const AUDIT_ACTIONS = {
  "delivery.redrive": { target: "delivery", details: redriveOne },
  "delivery.retry_now": { target: "delivery", details: redriveOne },
  /** One per resolved delivery, so its timeline shows who decided what and why; a bulk resolve writes them in the SQL of each chunk. */
  "delivery.resolve": { target: "delivery", details: resolveOne },
  "delivery.resend": { target: "delivery", details: resendOne },
  /** A bulk resolve: the filter and how many moved (target id: the bulk's id, also in each delivery's row). */
  "dlq.resolve": {
    target: "dlq",
    details: z.strictObject({ filter: z.record(z.string(), z.unknown()), resolution: z.enum(RESOLUTIONS), count: z.number().int() }),
  },
  "redrive.create": {
    target: "redrive_batch",
    details: z.strictObject({ filter: z.record(z.string(), z.unknown()), count: z.number().int(), ratePerSecond: z.number(), latestStateWins: z.boolean() }),
  },
  "redrive.cancel": {
    target: "redrive_batch",
    details: z.strictObject({ matched: z.number().int(), redriven: z.number().int(), skipped: z.number().int(), remaining: z.number().int(), batchReason: z.string() }),
  },
  /** A recover or backfill batch (target: the batch): the subscription, the window, how many items and the rate. */
  "recover.create": { target: "redrive_batch", details: batchWindow },
  "backfill.create": { target: "redrive_batch", details: batchWindow },
  "subscription.create": {
    target: "subscription",
    details: z.strictObject({ url: z.string(), eventTypes: z.array(z.string()), tenant: nullableString }),
  },
  "subscription.update": {
    target: "subscription",
    details: z.strictObject({ changed: z.array(z.string()), before: z.record(z.string(), z.unknown()) }),
  },
  "subscription.pause": { target: "subscription", details: stateChange },
  "subscription.resume": { target: "subscription", details: stateChange },
  /** Written by the worker's result statement when an endpoint answers 410 Gone. */
  "subscription.disable": {
    target: "subscription",
    details: z.strictObject({ deliveryId: z.string(), statusCode: z.literal(410), to: z.literal("disabled") }),
  },
  /** A test send (POST /api/v1/subscriptions/:id/test): which test, what was sent and what the endpoint answered. Never its headers or body. */
  "subscription.test": {
    target: "subscription",
    details: z.strictObject({
      testSendId: z.string(),
      eventId: nullableString,
      eventType: z.string(),
      statusCode: z.number().int().nullable(),
      errorClass: nullableString,
      durationMs: z.number().int(),
    }),
  },
  "subscription.secret.rotate": {
    target: "subscription",
    // Ids and times only: a secret never enters the audit log.
    details: z.strictObject({
      secretId: z.string(),
      overlapSeconds: z.number(),
      retiring: z.array(z.strictObject({ id: z.string(), expiresAt: nullableString })),
      supplied: z.boolean(),
      /** Secrets this rotation stopped now because it would have left more than the cap signing (lib/subscriptions/rotation.ts). */
      endedEarly: z.array(z.string()).optional(),
      maxActiveSecrets: z.number().int().optional(),
    }),
  },
  /** Retired: no new deliveries; its queued ones were resolved as superseded (each with its own delivery.resolve row). */
  "subscription.archive": {
    target: "subscription",
    details: z.strictObject({ superseded: z.number().int(), inFlight: z.number().int(), previousState: z.string() }),
  },
  "subscription.unarchive": {
    target: "subscription",
    details: z.strictObject({ archivedAt: z.string(), archivedBy: z.string(), archiveReason: z.string() }),
  },
  /** An admin ended a rotation's overlap early: the old secret stops signing now instead of at its expiry. Ids and times only. */
  "subscription.secret.expire": {
    target: "subscription",
    // cause/rotation: ended by a rotation past the cap of signing secrets rather than by an admin.
    details: z.strictObject({
      secretId: z.string(),
      expiresAtBefore: nullableString,
      expiresAt: z.string(),
      cause: z.literal("max_active_secrets").optional(),
      rotation: z.string().optional(),
    }),
  },
  /**
   * An erasure (lib/erasure/create-erasure.ts): the subject KEY, the tenant and the counts; never the erased value, nor a hash
   * of it. Target id: the erasure's id (its row in `erasures`, and each tombstoned event's erasure_id).
   */
  "erasure.run": {
    target: "erasure",
    details: z.strictObject({
      subjectKey: z.string(),
      tenant: nullableString,
      events: z.number().int(),
      opsEvents: z.number().int(),
      deliveries: z.number().int(),
      resolved: z.number().int(),
      attempts: z.number().int(),
    }),
  },
  /**
   * A retention run a person started (lib/retention/run-retention.ts; the daily run's record is its retention_runs row): the
   * policy it applied and how many rows of each table it removed or expunged; `stopped` when its process stopped it
   * between batches (the next run removes the rest). Target id: the run's id.
   */
  "retention.run": {
    target: "retention",
    global: true,
    details: z.strictObject({
      retentionDays: z.number().int(),
      payloadRetentionDays: z.number().int().nullable(),
      deliveries: z.number().int(),
      attempts: z.number().int(),
      events: z.number().int(),
      expunged: z.number().int(),
      partitions: z.number().int(),
      stopped: z.literal(true).optional(),
    }),
  },
  /** A tenant's retention override set or removed (target id and tenant: the tenant): before and after, null for none. */
  "retention.policy": {
    target: "retention",
    details: z.strictObject({
      before: z.strictObject({ retentionDays: z.number().int(), payloadRetentionDays: z.number().int().nullable() }).nullable(),
      after: z.strictObject({ retentionDays: z.number().int(), payloadRetentionDays: z.number().int().nullable() }).nullable(),
    }),
  },
  /** `tenant`: the tenant the user is confined to (absent or null: global). */
  "user.create": { target: "user", details: z.strictObject({ email: z.string(), role: z.string(), tenant: nullableString.optional() }) },
  "user.disable": { target: "user", details: userDetails },
  "user.enable": { target: "user", details: userDetails },
  "user.role": { target: "user", details: z.strictObject({ email: z.string(), from: z.string(), to: z.string() }) },
  "user.password_change": { target: "user", details: userDetails },
  "token.create": { target: "api_token", details: tokenDetails },
  "token.revoke": { target: "api_token", details: tokenDetails },
  /** A portal link minted for a district (the token itself is never recorded) and its revocation. */
  "portal.session.create": {
    target: "portal_session",
    details: z.strictObject({ tenant: z.string(), subscriptionId: nullableString, readOnly: z.boolean(), expiresAt: z.string() }),
  },
  /** `replacedBy`: the browser holding the session signed a person in, or opened another portal link, in its place. */
  "portal.session.revoke": {
    target: "portal_session",
    details: z.strictObject({ tenant: z.string(), subscriptionId: nullableString, replacedBy: z.enum(["sign-in", "portal"]).optional() }),
  },
  /** A tenant (district) registered by a global admin (target id: the tenant's id). */
  "tenant.create": { target: "tenant", details: z.strictObject({ name: z.string() }) },
  /** A tenant given its name in place of the placeholder the database registered it under (its id): the demo's districts. */
  "tenant.rename": { target: "tenant", details: z.strictObject({ from: z.string(), to: z.string() }) },
  /** A tenant's notification contacts replaced: how many addresses and the webhook's host, never the addresses themselves. */
  "tenant.contacts.update": {
    target: "tenant",
    details: z.strictObject({ emails: z.number().int(), webhookHost: nullableString, dlqThreshold: z.number().int().nullable().optional() }),
  },
  /** The operator's dead-letter threshold, the default of every district without its own (target id: "notifications"). */
  "notifications.settings.update": {
    target: "settings",
    details: z.strictObject({ dlqThreshold: z.strictObject({ from: z.number().int(), to: z.number().int() }) }),
    global: true,
  },
  /** The event catalog (lib/catalog; target id: the type). `changed`: the fields an update set. Never a payload. */
  "event_type.create": { target: "event_type", details: z.strictObject({ description: z.string(), hasSchema: z.boolean() }), global: true },
  "event_type.update": { target: "event_type", details: z.strictObject({ changed: z.array(z.string()), hasSchema: z.boolean() }), global: true },
  "event_type.delete": { target: "event_type", details: z.strictObject({ hadSchema: z.boolean() }), global: true },
  /** A delete of a type that has events: kept, marked deprecated (it still publishes). */
  "event_type.deprecate": { target: "event_type", details: z.strictObject({ hasEvents: z.boolean() }), global: true },
} as const satisfies Record<string, { target: AuditTargetType; details: z.ZodType; global?: true }>;

export type AuditAction = keyof typeof AUDIT_ACTIONS;
/** The actions as a list, in the order above (for filters). */
export const AUDIT_ACTION_LIST = Object.keys(AUDIT_ACTIONS) as AuditAction[];
type AuditDetails<A extends AuditAction> = z.input<(typeof AUDIT_ACTIONS)[A]["details"]>;

export function isAuditAction(s: string): s is AuditAction {
  return Object.prototype.hasOwnProperty.call(AUDIT_ACTIONS, s);
}

/** Whether an action's rows name a subscription the way a one-subscription scope reads them: as the target, or as details.subscriptionId. */
function namesSubscription(a: AuditAction): boolean {
  const spec = AUDIT_ACTIONS[a];
  return spec.target === "subscription" || "subscriptionId" in spec.details.shape;
}

/** Why an action can never be in a scope's audit trail, or null when it can: "global" (no row names a tenant), "subscription" (no row names one subscription). */
export function auditActionOutside(a: AuditAction, scope: { tenantId: string | null; subscriptionId?: string | null }): "global" | "subscription" | null {
  if (scope.tenantId === null) return null;
  if ("global" in AUDIT_ACTIONS[a]) return "global";
  if (scope.subscriptionId && !namesSubscription(a)) return "subscription";
  return null;
}

/**
 * The actions a scope's audit trail can hold, in the list's order (the Audit page's filter offers these): every one for
 * a global viewer; a district's, those whose rows can name it (the row's tenant, filled by the writer or from the
 * subscription it names: migration 0020); a one-subscription portal's, those whose rows can name that subscription.
 */
export function auditActionsIn(scope: { tenantId: string | null; subscriptionId?: string | null }): AuditAction[] {
  return AUDIT_ACTION_LIST.filter((a) => auditActionOutside(a, scope) === null);
}

/** The target types of a scope's possible actions, in the list's order (the Audit page's other filter). */
export function auditTargetTypesIn(scope: { tenantId: string | null; subscriptionId?: string | null }): AuditTargetType[] {
  const targets = new Set<AuditTargetType>(auditActionsIn(scope).map((a) => AUDIT_ACTIONS[a].target));
  return AUDIT_TARGET_TYPES.filter((t) => targets.has(t));
}

/** A stored row's details read back as its action's shape, or null when the row predates the schema or is not one of ours. */
export function parseAuditDetails<A extends AuditAction>(action: A, details: unknown): z.output<(typeof AUDIT_ACTIONS)[A]["details"]> | null {
  const r = AUDIT_ACTIONS[action].details.safeParse(details);
  return r.success ? (r.data as z.output<(typeof AUDIT_ACTIONS)[A]["details"]>) : null;
}

export type AuditEntryInput<A extends AuditAction> = {
  actor: string;
  action: A;
  targetType: (typeof AUDIT_ACTIONS)[A]["target"];
  targetId: string;
  reason?: string | null;
  details: AuditDetails<A>;
  /**
   * The tenant of what the row touched, when the writer knows it and the row names no subscription (a scoped bulk
   * resolve or redrive). Otherwise the database fills it from the subscription the row names (migration 0020).
   */
  tenantId?: string | null;
};

/**
 * Invariant 7: an audit row written in the same transaction as the change it
 * records. Details are checked against the action's schema before the insert:
 * a mismatch throws, so the transaction (and the change) rolls back rather
 * than commit a row the audit page cannot read.
 */
export async function writeAudit<A extends AuditAction>(tx: Tx, entry: AuditEntryInput<A>) {
  const spec = AUDIT_ACTIONS[entry.action];
  if (!spec) throw new Error(`Unknown audit action ${JSON.stringify(entry.action)}`);
  if (entry.targetType !== spec.target) throw new Error(`Audit action ${entry.action} targets ${spec.target}, not ${entry.targetType}`);
  // The Audit page tells a district it can never have such a row (auditActionsIn): one that named a tenant would be hidden from its filter.
  if ("global" in spec && entry.tenantId) throw new Error(`Audit action ${entry.action} is global: it names no tenant (${entry.tenantId})`);
  const details = spec.details.parse(entry.details);
  await tx.auditEntry.create({
    data: {
      actor: entry.actor,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      reason: entry.reason ?? null,
      details: details as object,
      ...(entry.tenantId ? { tenantId: entry.tenantId } : {}),
    },
  });
}
