// The typed client for hookledger's HTTP API (`import { HookledgerClient } from
// "hookledger/client"`). It runs anywhere fetch does (Node 20+, Deno, Bun,
// browsers) and imports nothing from the server at run time: its types come
// from the same zod schemas and services the routes use, as type-only imports
// that vanish when compiled, so the client cannot drift from what the routes
// accept and answer.
import type { z } from "zod";
import type { TCreateEvent } from "../events/schema";
import type { TPublishBatchResponse } from "../events/batch";
import type { PublishedDelivery } from "../events/publish";
import type { ZCreateSubscription, ZUpdateSubscription } from "../subscriptions/schema";
import type { ZRotateSecret, rotateSecret, SecretMeta } from "../subscriptions/rotation";
import type { SubscriptionView } from "../subscriptions/service";
import type { ZListDeliveries, listDeliveries, getDeliveryWithAttempts } from "../deliveries/queries";
import type { ZCreateRedrive, ZListRedrives } from "../redrive/schema";
import type { redriveDelivery, createRedriveBatch, getRedriveBatch, cancelRedriveBatch, listRedriveBatches, RedrivePreview } from "../redrive/service";
import type { ZRecover, ZBackfill } from "../redrive/schema";
import type { createRecoverBatch, previewRecover, createBackfillBatch, previewBackfill } from "../redrive/recover";
import type { ZResendDelivery, ZResolveDelivery, ZBulkResolve } from "../resolve/schema";
import type { resendDelivery, resolveDelivery, resolveDeadLetters, previewResolve } from "../resolve/service";
import type { ZTestSend, sendTest, recentTestSends } from "../net/test-send";
import type { ZArchiveSubscription, archiveSubscription, unarchiveSubscription } from "../subscriptions/archive";
import type { expireSecret } from "../subscriptions/rotation";
import type { ZCreateErasure } from "../erasure/schema";
import type { createErasure } from "../erasure/service";
import type { ZDlqHistory, getDlqSummary, findDlqHistory } from "../dashboard/dlq";
import type { TCreateTenant, TenantView } from "../tenants/service";
import type { TRetentionOverride } from "../retention/schema";
import type { RetentionOverview, RetentionPolicy, RetentionReport } from "../retention/service";

type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

export type PublishEventInput = TCreateEvent;
export type PublishEventResult = { eventId: string; deliveries: PublishedDelivery[]; created: boolean };
/** publishBatch's answer: each published event's result with its deliveries. */
export type PublishBatchResult = {
  results: (
    | (Exclude<TPublishBatchResponse["results"][number], { error: unknown }> & { deliveries: PublishedDelivery[] })
    | Extract<TPublishBatchResponse["results"][number], { error: unknown }>
  )[];
};
/** publishBatch's answer with `{ deliveries: false }`: each published event's status only. */
export type PublishBatchStatusResult = {
  results: (
    Omit<Exclude<TPublishBatchResponse["results"][number], { error: unknown }>, "deliveries"> | Extract<TPublishBatchResponse["results"][number], { error: unknown }>
  )[];
};
export type CreateSubscriptionInput = z.input<typeof ZCreateSubscription>;
export type UpdateSubscriptionInput = z.input<typeof ZUpdateSubscription>;
export type RotateSecretInput = z.input<typeof ZRotateSecret>;
export type ListDeliveriesQuery = z.input<typeof ZListDeliveries>;
export type CreateRedriveInput = z.input<typeof ZCreateRedrive>;
export type ListRedrivesQuery = z.input<typeof ZListRedrives>;
export type RecoverInput = Omit<z.input<typeof ZRecover>, "dryRun">;
export type BackfillInput = Omit<z.input<typeof ZBackfill>, "dryRun">;
export type ResolveInput = z.input<typeof ZResolveDelivery>;
export type BulkResolveInput = Omit<z.input<typeof ZBulkResolve>, "dryRun">;
export type TestSendInput = z.input<typeof ZTestSend>;
type ArchiveReason = z.input<typeof ZArchiveSubscription>["reason"];
export type ErasureInput = z.input<typeof ZCreateErasure>;
export type DlqHistoryQuery = z.input<typeof ZDlqHistory>;
/** What a `dryRun: true` call answers instead of doing the work. */
type Preview<F extends (...args: never[]) => unknown> = Result<F> & { id: null; status: "preview" };
export type Subscription = SubscriptionView;
export type { SecretMeta, SubscriptionView };

/** An error answer from the API: its `code` (validation_failed, not_found, rate_limited, …), HTTP status and details. */
export class HookledgerApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly details: unknown = null,
  ) {
    super(message);
    this.name = "HookledgerApiError";
  }
}

export type HookledgerClientOptions = {
  /** The server, e.g. http://localhost:3000 (the /api/v1 prefix is added). */
  baseUrl: string;
  /** A bearer token (`npx hookledger token create --role producer`). */
  token: string;
  /** Retries of a 429 or 503 (and, for publishes and reads, of a connection failure). Default 3. */
  maxRetries?: number;
  /** The longest wait before a retry, whatever Retry-After asks. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Per request. Default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
};

const RETRY_STATUSES = new Set([429, 503]);
/** Asks for an answer uncompressed (publishBatch's). */
const IDENTITY = { "accept-encoding": "identity" };
type RequestOptions = { body?: unknown; query?: Record<string, unknown>; idempotent?: boolean; headers?: Record<string, string> };

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class HookledgerClient {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly opts: HookledgerClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "") + "/api/v1";
    this.fetchFn = opts.fetch ?? fetch;
    this.maxRetries = opts.maxRetries ?? 3;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** One request with the retry policy; answers the parsed body and the status. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<{ status: number; body: T }> {
    let url = this.base + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null) q.set(k, v instanceof Date ? v.toISOString() : String(v));
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    const idempotent = opts.idempotent ?? method === "GET";
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchFn(url, {
          method,
          headers: {
            accept: "application/json",
            authorization: `Bearer ${this.opts.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...opts.headers,
          },
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        // A connection failure may or may not have reached the server: only a request that is safe to repeat is sent again.
        if (idempotent && attempt < this.maxRetries) {
          await sleep(Math.min(this.maxRetryDelayMs, 250 * 2 ** attempt));
          continue;
        }
        throw err;
      }
      if (RETRY_STATUSES.has(res.status) && attempt < this.maxRetries) {
        await res.body?.cancel().catch(() => {});
        await sleep(Math.min(this.maxRetryDelayMs, retryAfterMs(res.headers.get("retry-after")) ?? 500 * 2 ** attempt));
        continue;
      }
      const text = await res.text();
      let parsed: unknown = null;
      if (text) {
        try {
          parsed = JSON.parse(text);
        } catch {
          if (res.ok) throw new HookledgerApiError(res.status, "invalid_response", `The server answered HTTP ${res.status} with a body that is not JSON.`);
        }
      }
      if (!res.ok) {
        const e = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
        throw new HookledgerApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `Request failed with HTTP ${res.status}.`, e?.details ?? null);
      }
      return { status: res.status, body: parsed as T };
    }
  }

  private async call<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.request<T>(method, path, opts)).body;
  }

  /** Publishes one event; the same id again answers `created: false` with the same deliveries. */
  async publish(event: PublishEventInput): Promise<PublishEventResult> {
    const r = await this.request<{ eventId: string; deliveries: PublishedDelivery[] }>("POST", "/events", { body: event, idempotent: true });
    return { ...r.body, created: r.status === 202 };
  }

  /**
   * Publishes up to 500 events; one result per event, in order. An event's own error does not throw: read its `error`.
   * The answer is asked for uncompressed: it is mostly random ids and delivery keys, which gzip shrinks only about
   * threefold for about a fifth of the server's CPU per batched event (BENCHMARKS.md, "The batch answer, uncompressed").
   * With `{ deliveries: false }` each result is the status only, as a backfill needs: a fraction of the bytes.
   */
  publishBatch(events: PublishEventInput[] | unknown[], opts?: { deliveries?: true }): Promise<PublishBatchResult>;
  publishBatch(events: PublishEventInput[] | unknown[], opts: { deliveries: false }): Promise<PublishBatchStatusResult>;
  publishBatch(events: PublishEventInput[] | unknown[], opts: { deliveries?: boolean } = {}): Promise<PublishBatchResult | PublishBatchStatusResult> {
    const query = opts.deliveries === false ? { deliveries: "false" } : undefined;
    return this.call("POST", "/events/batch", { body: { events }, query, idempotent: true, headers: IDENTITY });
  }

  readonly subscriptions = {
    list: (query: { tenant?: string } = {}) => this.call<{ items: Subscription[] }>("GET", "/subscriptions", { query }),
    get: (id: string) => this.call<Subscription>("GET", `/subscriptions/${encodeURIComponent(id)}`),
    create: (input: CreateSubscriptionInput) => this.call<Subscription & { secret: string }>("POST", "/subscriptions", { body: input }),
    update: (id: string, input: UpdateSubscriptionInput) => this.call<Subscription>("PATCH", `/subscriptions/${encodeURIComponent(id)}`, { body: input }),
    rotate: (id: string, input: RotateSecretInput = {}) =>
      this.call<Result<typeof rotateSecret>>("POST", `/subscriptions/${encodeURIComponent(id)}/secrets`, { body: input }),
    secrets: (id: string) => this.call<{ items: SecretMeta[] }>("GET", `/subscriptions/${encodeURIComponent(id)}/secrets`),
    /** Ends a rotation's overlap now: the old secret stops signing (admins). */
    endSecret: (id: string, secretId: string) =>
      this.call<Result<typeof expireSecret>>("DELETE", `/subscriptions/${encodeURIComponent(id)}/secrets/${encodeURIComponent(secretId)}`),
    /** A signed hookledger.ping now (or, with `eventId`, that event's bytes marked as a test): the endpoint's answer, also when it failed. */
    test: (id: string, input: TestSendInput = {}) => this.call<Result<typeof sendTest>>("POST", `/subscriptions/${encodeURIComponent(id)}/test`, { body: input }),
    testSends: (id: string) => this.call<{ items: Result<typeof recentTestSends> }>("GET", `/subscriptions/${encodeURIComponent(id)}/test`),
    archive: (id: string, reason: ArchiveReason) =>
      this.call<Result<typeof archiveSubscription>>("POST", `/subscriptions/${encodeURIComponent(id)}/archive`, { body: { reason } }),
    unarchive: (id: string, reason: ArchiveReason) =>
      this.call<Result<typeof unarchiveSubscription>>("POST", `/subscriptions/${encodeURIComponent(id)}/unarchive`, { body: { reason } }),
    /** Sends a window of the subscription's deliveries again as a paced batch (followed with `redrives.get`). */
    recover: (id: string, input: RecoverInput) =>
      this.call<Result<typeof createRecoverBatch>>("POST", `/subscriptions/${encodeURIComponent(id)}/recover`, { body: input }),
    previewRecover: (id: string, input: RecoverInput) =>
      this.call<Preview<typeof previewRecover>>("POST", `/subscriptions/${encodeURIComponent(id)}/recover`, { body: { ...input, dryRun: true } }),
    /** Delivers the window's past events the subscription never had, as a paced batch. */
    backfill: (id: string, input: BackfillInput) =>
      this.call<Result<typeof createBackfillBatch>>("POST", `/subscriptions/${encodeURIComponent(id)}/backfill`, { body: input }),
    previewBackfill: (id: string, input: BackfillInput) =>
      this.call<Preview<typeof previewBackfill>>("POST", `/subscriptions/${encodeURIComponent(id)}/backfill`, { body: { ...input, dryRun: true } }),
  };

  readonly deliveries = {
    list: (query: ListDeliveriesQuery = {}) => this.call<Result<typeof listDeliveries>>("GET", "/deliveries", { query }),
    get: (id: string) => this.call<Result<typeof getDeliveryWithAttempts>>("GET", `/deliveries/${encodeURIComponent(id)}`),
    redrive: (id: string, reason: string) => this.call<Result<typeof redriveDelivery>>("POST", `/deliveries/${encodeURIComponent(id)}/redrive`, { body: { reason } }),
    /** Sends a delivered (or resolved) delivery again: same key and bytes, a fresh signature. */
    resend: (id: string, reason: z.input<typeof ZResendDelivery>["reason"]) =>
      this.call<Result<typeof resendDelivery>>("POST", `/deliveries/${encodeURIComponent(id)}/resend`, { body: { reason } }),
    /** Records that a dead letter will not be delivered, and why. */
    resolve: (id: string, input: ResolveInput) => this.call<Result<typeof resolveDelivery>>("POST", `/deliveries/${encodeURIComponent(id)}/resolve`, { body: input }),
  };

  readonly dlq = {
    summary: (query: { subscriptionId?: string } = {}) => this.call<Result<typeof getDlqSummary>>("GET", "/dlq", { query }),
    history: (query: DlqHistoryQuery = {}) => this.call<Result<typeof findDlqHistory>>("GET", "/dlq/history", { query }),
    /** Resolves every dead letter the filter matches. */
    resolve: (input: BulkResolveInput) => this.call<Result<typeof resolveDeadLetters> & { status: "resolved" }>("POST", "/dlq/resolve", { body: input }),
    previewResolve: (input: BulkResolveInput) => this.call<Preview<typeof previewResolve>>("POST", "/dlq/resolve", { body: { ...input, dryRun: true } }),
  };

  readonly tenants = {
    list: () => this.call<{ items: TenantView[] }>("GET", "/tenants"),
    /** Registers a district (global admins): subscriptions, users and tokens can then name it. */
    create: (input: TCreateTenant) => this.call<TenantView>("POST", "/tenants", { body: input }),
  };

  readonly retention = {
    /** The policy, the oldest data kept, the last runs and the tables' sizes (admins). */
    get: () => this.call<RetentionOverview>("GET", "/retention"),
    /** A tenant's override of the retention days; `retentionDays: null` removes it. */
    setOverride: (input: TRetentionOverride) => this.call<RetentionPolicy>("PUT", "/retention", { body: input }),
    /** Runs retention now; `dryRun: true` counts only. */
    run: (opts: { dryRun?: boolean } = {}) => this.call<RetentionReport>("POST", "/retention/run", { body: opts }),
  };

  readonly erasures = {
    /** Erases one subject key and value's events (global admins); `dryRun: true` counts only. The receipt never repeats the value. */
    create: (input: ErasureInput) => this.call<Result<typeof createErasure>>("POST", "/erasures", { body: input }),
  };

  readonly redrives = {
    /** With `dryRun: true` the preview only (`id: null`); otherwise the running batch. */
    create: (input: CreateRedriveInput) =>
      this.call<Result<typeof createRedriveBatch> | (RedrivePreview & { id: null; status: "preview" })>("POST", "/redrives", { body: input }),
    list: (query: ListRedrivesQuery = {}) => this.call<{ items: Result<typeof listRedriveBatches> }>("GET", "/redrives", { query }),
    get: (id: string) => this.call<Result<typeof getRedriveBatch>>("GET", `/redrives/${encodeURIComponent(id)}`),
    cancel: (id: string, reason?: string) =>
      this.call<Result<typeof cancelRedriveBatch>>("POST", `/redrives/${encodeURIComponent(id)}/cancel`, { body: reason === undefined ? {} : { reason } }),
  };
}
