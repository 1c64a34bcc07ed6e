import { z } from "zod";
import { zPageLimit } from "../api/page-input";
import { isValidSecret } from "./secrets";
import { ZEndpointHeaders, ZEndpointTls } from "./endpoint-auth";
import { SUBSCRIPTION_SORTS } from "./list-state";

const EVENT_TYPE_RE = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;
export const ZEventTypeName = z.string().max(100).regex(EVENT_TYPE_RE, "an event type is dotted lower-case words, e.g. assignment.graded");
const ZEventTypeFilter = z.union([z.literal("*"), ZEventTypeName]);

export const ZRetryPolicy = z
  .object({
    ladderSeconds: z
      .array(
        z
          .number()
          .int()
          .min(0)
          .max(7 * 86400),
      )
      .min(1)
      .max(20)
      .optional(),
    maxAgeSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86400)
      .optional(),
    // Attempts a run may make, reaped leases included (lib/ledger/retry-policy.ts; default: one per rung plus the first try).
    maxAttempts: z.number().int().min(1).max(100).optional(),
    timeoutMs: z.number().int().min(100).max(120_000).optional(),
    // Classification overrides: "<status>" or "4xx"/"5xx" → "retry" | "dead_letter".
    classify: z.record(z.string().regex(/^([1-5]\d\d|[1-5]xx)$/, "a status such as 409 or a class such as 4xx"), z.enum(["retry", "dead_letter"])).optional(),
  })
  .strict();
export type TRetryPolicy = z.infer<typeof ZRetryPolicy>;

/**
 * When an endpoint counts as down: every attempt failed for `windowSeconds`,
 * and at least `minAttempts` of them; it is then paused for failing and probed
 * every `probeIntervalSeconds` (backing off to hourly) until it answers 2xx.
 * Omitted fields take the defaults; `null` turns the pause off.
 */
const FAILURE_POLICY_DEFAULTS = { windowSeconds: 86_400, minAttempts: 20, probeIntervalSeconds: 900 } as const;
export const ZFailurePolicy = z
  .object({
    windowSeconds: z
      .number()
      .int()
      .min(60, "windowSeconds is at least 60 (a shorter window pauses an endpoint for a blip)")
      .max(30 * 86400)
      .default(FAILURE_POLICY_DEFAULTS.windowSeconds),
    minAttempts: z.number().int().min(1, "minAttempts is at least 1").max(100_000).default(FAILURE_POLICY_DEFAULTS.minAttempts),
    probeIntervalSeconds: z
      .number()
      .int()
      .min(10, "probeIntervalSeconds is at least 10")
      .max(30 * 86400)
      .default(FAILURE_POLICY_DEFAULTS.probeIntervalSeconds),
  })
  .strict()
  .refine((p) => p.probeIntervalSeconds <= p.windowSeconds, { message: "probeIntervalSeconds must not exceed windowSeconds", path: ["probeIntervalSeconds"] });
export type TFailurePolicy = z.infer<typeof ZFailurePolicy>;

const ZSubscriptionId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only");

export const ZCreateSubscription = z
  .object({
    id: ZSubscriptionId.optional(),
    name: z.string().trim().min(1).max(200),
    url: z.string().min(1).max(2048),
    eventTypes: z.array(ZEventTypeFilter).min(1).max(100),
    tenant: z.string().trim().min(1).max(200).optional(),
    secret: z.string().refine(isValidSecret, "a secret is whsec_ followed by base64 of 16–64 bytes").optional(),
    retryPolicy: ZRetryPolicy.optional(),
    rateLimitPerSecond: z.number().int().min(1).max(100_000).nullable().optional(),
    maxConcurrency: z.number().int().min(1).max(1000).optional(),
    // Write-only endpoint authentication (lib/subscriptions/endpoint-auth.ts); null clears.
    headers: ZEndpointHeaders.nullable().optional(),
    tls: ZEndpointTls.nullable().optional(),
    failurePolicy: ZFailurePolicy.nullable().optional(),
  })
  .strict();
export type TCreateSubscription = z.infer<typeof ZCreateSubscription>;

export const ZUpdateSubscription = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    url: z.string().min(1).max(2048).optional(),
    eventTypes: z.array(ZEventTypeFilter).min(1).max(100).optional(),
    state: z.enum(["active", "paused"]).optional(),
    reason: z.string().trim().max(500).optional(),
    retryPolicy: ZRetryPolicy.optional(),
    rateLimitPerSecond: z.number().int().min(1).max(100_000).nullable().optional(),
    maxConcurrency: z.number().int().min(1).max(1000).optional(),
    // Write-only endpoint authentication (lib/subscriptions/endpoint-auth.ts); null clears.
    headers: ZEndpointHeaders.nullable().optional(),
    tls: ZEndpointTls.nullable().optional(),
    failurePolicy: ZFailurePolicy.nullable().optional(),
    // Moves the subscription to another tenant (null: tenant-less); global admins only (lib/subscriptions/manage-subscriptions.ts).
    tenant: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .strict()
  .refine((v) => Object.keys(v).some((k) => k !== "reason"), "nothing to change");
export type TUpdateSubscription = z.infer<typeof ZUpdateSubscription>;

export { SUBSCRIPTION_SORTS, type SubscriptionSort } from "./list-state";

/** At most this many subscriptions a page (the default is SUBSCRIPTION_PAGE_DEFAULT). */
export const SUBSCRIPTION_PAGE_MAX = 500;
const SUBSCRIPTION_PAGE_DEFAULT = 100;

/**
 * GET /api/v1/subscriptions (and the dashboard's health list): one page at a time. `q` is a case-insensitive
 * substring of the name, id, URL or tenant; `cursor` is the previous page's `nextCursor`, valid for the same `sort`.
 */
export const ZListSubscriptions = z
  .object({
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      // A search never holds a control character: the list joins the fields it searches with one (lib/subscriptions/list.ts).
      .regex(/^[^\x00-\x1f\x7f]*$/, "letters, digits, spaces and punctuation only, no control characters")
      .optional(),
    tenant: z.string().trim().min(1).max(200).optional(),
    state: z.enum(["active", "paused", "disabled"]).optional(),
    /** "true": archived subscriptions are listed too. */
    archived: z.enum(["true", "false"]).optional(),
    sort: z.enum(SUBSCRIPTION_SORTS).default("name"),
    cursor: z.string().min(1).max(1000).optional(),
    limit: zPageLimit(SUBSCRIPTION_PAGE_MAX, SUBSCRIPTION_PAGE_DEFAULT),
  })
  .strict();
export type TListSubscriptions = z.input<typeof ZListSubscriptions>;
