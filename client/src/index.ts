// @hookledger/client: the typed client for hookledger's HTTP API. It runs
// anywhere fetch does (Node 20+, Deno, Bun, browsers) and depends on nothing
// else. Its types are generated from the OpenAPI document the server serves at
// GET /api/v1/openapi.json (./openapi.ts, `npm run client:types` in the
// hookledger repository), and every call names its route as the document does
// ("/api/v1/subscriptions/{id}"), so a route or field the document drops fails
// to compile here instead of failing at a producer's run time.
import type { components, operations, paths } from "./openapi.js";

export type { components, operations, paths };

type Method = "get" | "post" | "put" | "patch" | "delete";
type Route = keyof paths;
/** The methods the document gives a route. */
type MethodOf<R extends Route> = { [M in Method]: paths[R][M] extends undefined ? never : M }[Method];
type Operation<R extends Route, M extends MethodOf<R>> = NonNullable<paths[R][M]>;
type Json<T> = T extends { content: { "application/json": infer J } } ? J : never;
/** The JSON body an operation accepts. */
export type BodyOf<O> = O extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
/** The query string an operation accepts. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PathParamsOf<O> = O extends { parameters: { path?: infer P } } ? NonNullable<P> : never;
/** What an operation answers when it succeeds (its 2xx responses; `S`: one of them, e.g. a dry run's 200 beside a create's 201). */
export type AnswerOf<O, S extends number = 200 | 201 | 202> = O extends { responses: infer R } ? Json<R[Extract<keyof R, S>]> : never;
type Input<O> = { path?: PathParamsOf<O>; query?: QueryOf<O>; body?: BodyOf<O> };
/** What the operation named `K` in the document (its operationId) answers when it succeeds (with `S`, with that status). */
export type Answer<K extends keyof operations, S extends number = 200 | 201 | 202> = AnswerOf<operations[K], S>;

export type PublishEventInput = BodyOf<operations["postEvents"]>;
export type PublishedDelivery = AnswerOf<operations["postEvents"]>["deliveries"][number];
export type PublishEventResult = AnswerOf<operations["postEvents"]> & { created: boolean };
type BatchResult = AnswerOf<operations["postEventsBatch"]>["results"][number];
/** One event of a batch that failed on its own: its index, its id if it had one, and the API's error. */
export type PublishBatchError = Extract<BatchResult, { error: unknown }>;
type BatchPublished = Omit<Exclude<BatchResult, { error: unknown }>, "deliveries">;
/** publishBatch's answer: each published event's result with its deliveries. */
export type PublishBatchResult = { results: ((BatchPublished & { deliveries: PublishedDelivery[] }) | PublishBatchError)[] };
/** publishBatch's answer with `{ deliveries: false }`: each published event's status only. */
export type PublishBatchStatusResult = { results: (BatchPublished | PublishBatchError)[] };
export type Subscription = AnswerOf<operations["getSubscriptionsId"]>;
export type SubscriptionView = Subscription;
export type CreateSubscriptionInput = BodyOf<operations["postSubscriptions"]>;
export type UpdateSubscriptionInput = BodyOf<operations["patchSubscriptionsId"]>;
export type ListSubscriptionsQuery = QueryOf<operations["getSubscriptions"]>;
export type RotateSecretInput = BodyOf<operations["postSubscriptionsIdSecrets"]>;
export type SecretMeta = AnswerOf<operations["getSubscriptionsIdSecrets"]>["items"][number];
/** A rotation's answer: the new secret (shown this once) and the older secrets' windows. */
export type RotatedSecret = Answer<"postSubscriptionsIdSecrets">;
export type TestSend = Answer<"postSubscriptionsIdTest">;
export type TestSendInput = BodyOf<operations["postSubscriptionsIdTest"]>;
type ArchiveReason = BodyOf<operations["postSubscriptionsIdArchive"]>["reason"];
export type RecoverInput = Omit<BodyOf<operations["postSubscriptionsIdRecover"]>, "dryRun">;
export type BackfillInput = Omit<BodyOf<operations["postSubscriptionsIdBackfill"]>, "dryRun">;
export type ListDeliveriesQuery = QueryOf<operations["getDeliveries"]>;
export type Delivery = AnswerOf<operations["getDeliveries"]>["items"][number];
export type DeliveryWithAttempts = AnswerOf<operations["getDeliveriesId"]>;
/** A bulk redrive, recover or backfill: the batch record `redrives.list` and `cancel` answer with. */
export type RedriveBatch = Answer<"postRedrives", 201>;
/** `redrives.get`: the batch with its progress. */
export type RedriveBatchProgress = Answer<"getRedrivesId">;
export type RedrivePreview = Answer<"postRedrives", 200>;
export type RecoverPreview = Answer<"postSubscriptionsIdRecover", 200>;
export type BackfillPreview = Answer<"postSubscriptionsIdBackfill", 200>;
export type BulkResolveResult = Extract<Answer<"postDlqResolve">, { status: "resolved" }>;
export type BulkResolvePreview = Extract<Answer<"postDlqResolve">, { status: "preview" }>;
export type DlqSummary = Answer<"getDlq">;
export type DlqHistory = Answer<"getDlqHistory">;
export type Tenant = Answer<"postTenants">;
export type ListTenantsQuery = QueryOf<operations["getTenants"]>;
export type RetentionOverview = Answer<"getRetention">;
export type RetentionPolicy = Answer<"putRetention">;
export type ErasureReceipt = Answer<"postErasures">;
export type ResolveInput = BodyOf<operations["postDeliveriesIdResolve"]>;
type ResendReason = BodyOf<operations["postDeliveriesIdResend"]>["reason"];
export type BulkResolveInput = Omit<BodyOf<operations["postDlqResolve"]>, "dryRun">;
export type DlqSummaryQuery = QueryOf<operations["getDlq"]>;
export type DlqHistoryQuery = QueryOf<operations["getDlqHistory"]>;
export type CreateRedriveInput = BodyOf<operations["postRedrives"]>;
export type ListRedrivesQuery = QueryOf<operations["getRedrives"]>;
export type CreateTenantInput = BodyOf<operations["postTenants"]>;
/** A catalogued event type: description, JSON Schema, example, summary fields, and the subscriptions taking it. */
export type EventType = Answer<"getEventTypesType">;
export type CreateEventTypeInput = BodyOf<operations["postEventTypes"]>;
export type UpdateEventTypeInput = BodyOf<operations["putEventTypesType"]>;
export type TenantContacts = Answer<"getTenantsIdContacts">;
export type SetContactsInput = BodyOf<operations["putTenantsIdContacts"]>;
export type SetNotificationSettingsInput = BodyOf<operations["putNotificationsSettings"]>;
export type ListNotificationsQuery = QueryOf<operations["getNotifications"]>;
export type Notification = Answer<"getNotifications">["items"][number];
export type CreatePortalSessionInput = BodyOf<operations["postPortalSessions"]>;
export type PortalSession = Answer<"postPortalSessions", 201>;
export type RetentionOverrideInput = BodyOf<operations["putRetention"]>;
export type RunRetentionInput = BodyOf<operations["postRetentionRun"]>;
export type ErasureInput = BodyOf<operations["postErasures"]>;
/** Every error answer's body: `{ error: { code, message, details } }`. */
export type ApiErrorBody = components["schemas"]["Error"];

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
type RequestOptions = { body?: unknown; query?: object; idempotent?: boolean; headers?: Record<string, string> };
type SendOptions = { idempotent?: boolean; headers?: Record<string, string> };

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why an option that must be a non-empty string is not one. */
function described(v: unknown): string {
  if (v === undefined) return "missing";
  if (typeof v === "string") return "empty";
  return `a ${v === null ? "null" : typeof v}, not a string`;
}

/**
 * The server's origin (and any path prefix a proxy adds), without a trailing slash. Checked here because the options
 * usually come from environment variables: an unset one would otherwise surface as "Cannot read properties of
 * undefined", "fetch failed" after the retries, or a 404 for /api/v1/api/v1/events.
 */
function checkBaseUrl(v: unknown): string {
  const example = `such as "http://localhost:3000"`;
  if (typeof v !== "string" || !v.trim()) throw new TypeError(`HookledgerClient: baseUrl is ${described(v)}; pass the hookledger server's address, ${example}.`);
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new TypeError(`HookledgerClient: baseUrl ${JSON.stringify(v)} is not an http:// or https:// address; pass the server's address, ${example}.`);
  const base = v.trim().replace(/\/+$/, "");
  if (/\/api\/v1$/.test(url.pathname.replace(/\/+$/, "")))
    throw new TypeError(
      `HookledgerClient: baseUrl ${JSON.stringify(v)} ends with /api/v1, which the client adds to every call; pass ${JSON.stringify(base.replace(/\/api\/v1$/, ""))}.`,
    );
  return base;
}

function checkToken(v: unknown): void {
  if (typeof v !== "string" || !v.trim())
    throw new TypeError(
      `HookledgerClient: token is ${described(v)}; pass an API token (\`npx hookledger token create --role producer\` prints one; a service usually reads it from an environment variable such as HOOKLEDGER_TOKEN).`,
    );
}

export class HookledgerClient {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly opts: HookledgerClientOptions) {
    this.base = checkBaseUrl(opts?.baseUrl);
    checkToken(opts.token);
    // Called as a plain function: a browser's fetch called as another object's method throws "Illegal invocation".
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.maxRetries = opts.maxRetries ?? 3;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** One request to `/api/v1` + `path` with the retry policy; answers the parsed body and the status. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<{ status: number; body: T }> {
    let url = `${this.base}/api/v1${path}`;
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
        const e = (parsed as Partial<ApiErrorBody> | null)?.error;
        throw new HookledgerApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `Request failed with HTTP ${res.status}.`, e?.details ?? null);
      }
      return { status: res.status, body: parsed as T };
    }
  }

  /** A route of the document, its `{name}` segments filled from `input.path`; typed by the document's operation. */
  private send<R extends Route, M extends MethodOf<R>>(
    method: M,
    route: R,
    input: Input<Operation<R, M>> = {},
    opts: SendOptions = {},
  ): Promise<{ status: number; body: AnswerOf<Operation<R, M>> }> {
    const params = (input.path ?? {}) as Record<string, string>;
    const path = route.replace(/^\/api\/v1/, "").replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]));
    return this.request(method.toUpperCase(), path, { body: input.body, query: input.query as object | undefined, ...opts });
  }

  private async op<R extends Route, M extends MethodOf<R>>(method: M, route: R, input?: Input<Operation<R, M>>, opts?: SendOptions): Promise<AnswerOf<Operation<R, M>>> {
    return (await this.send(method, route, input, opts)).body;
  }

  /** Every item of a cursor-paged list, page after page: `page(cursor)` answers one page and the next page's cursor. */
  private async *everyPage<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | null }>): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const p = await page(cursor);
      yield* p.items;
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
  }

  /** Publishes one event; the same id again answers `created: false` with the same deliveries. */
  async publish(event: PublishEventInput): Promise<PublishEventResult> {
    const r = await this.send("post", "/api/v1/events", { body: event }, { idempotent: true });
    return { ...r.body, created: r.status === 202 };
  }

  /**
   * Publishes up to 500 events; one result per event, in order. An event's own error does not throw: read its `error`.
   * The answer is asked for uncompressed: it is mostly random ids and delivery keys, which gzip shrinks only about
   * threefold for about a fifth of the server's CPU per batched event (hookledger's BENCHMARKS.md F9).
   * With `{ deliveries: false }` each result is the status only, as a backfill needs: a fraction of the bytes.
   */
  publishBatch(events: PublishEventInput[] | unknown[], opts?: { deliveries?: true }): Promise<PublishBatchResult>;
  publishBatch(events: PublishEventInput[] | unknown[], opts: { deliveries: false }): Promise<PublishBatchStatusResult>;
  async publishBatch(events: PublishEventInput[] | unknown[], opts: { deliveries?: boolean } = {}): Promise<PublishBatchResult | PublishBatchStatusResult> {
    const query = opts.deliveries === false ? { deliveries: "false" as const } : undefined;
    // The server leaves deliveries out only when asked to (deliveries=false), which the overloads above encode.
    return (await this.op("post", "/api/v1/events/batch", { body: { events }, query }, { idempotent: true, headers: IDENTITY })) as PublishBatchResult;
  }

  readonly subscriptions = {
    /** One page: `{items, nextCursor}`; pass `nextCursor` back as `cursor` for the next (null: there is none). `q` searches name, id, URL and tenant. */
    list: (query: ListSubscriptionsQuery = {}): Promise<Answer<"getSubscriptions">> => this.op("get", "/api/v1/subscriptions", { query }),
    /** Every subscription the query matches, page after page (`for await (const s of client.subscriptions.listAll({ q }))`). */
    listAll: (query: Omit<ListSubscriptionsQuery, "cursor"> = {}): AsyncGenerator<Subscription> =>
      this.everyPage((cursor) => this.subscriptions.list({ ...query, cursor })),
    get: (id: string): Promise<Answer<"getSubscriptionsId">> => this.op("get", "/api/v1/subscriptions/{id}", { path: { id } }),
    create: (input: CreateSubscriptionInput): Promise<Answer<"postSubscriptions">> => this.op("post", "/api/v1/subscriptions", { body: input }),
    update: (id: string, input: UpdateSubscriptionInput): Promise<Answer<"patchSubscriptionsId">> =>
      this.op("patch", "/api/v1/subscriptions/{id}", { path: { id }, body: input }),
    rotate: (id: string, input: RotateSecretInput = {}): Promise<Answer<"postSubscriptionsIdSecrets">> =>
      this.op("post", "/api/v1/subscriptions/{id}/secrets", { path: { id }, body: input }),
    secrets: (id: string): Promise<Answer<"getSubscriptionsIdSecrets">> => this.op("get", "/api/v1/subscriptions/{id}/secrets", { path: { id } }),
    /** Ends a rotation's overlap now: the old secret stops signing (admins). */
    endSecret: (id: string, secretId: string): Promise<Answer<"deleteSubscriptionsIdSecretsSecretId">> =>
      this.op("delete", "/api/v1/subscriptions/{id}/secrets/{secretId}", { path: { id, secretId } }),
    /** A signed hookledger.ping now (or, with `eventId`, that event's bytes marked as a test): the endpoint's answer, also when it failed. */
    test: (id: string, input: TestSendInput = {}): Promise<Answer<"postSubscriptionsIdTest">> =>
      this.op("post", "/api/v1/subscriptions/{id}/test", { path: { id }, body: input }),
    testSends: (id: string): Promise<Answer<"getSubscriptionsIdTest">> => this.op("get", "/api/v1/subscriptions/{id}/test", { path: { id } }),
    archive: (id: string, reason: ArchiveReason): Promise<Answer<"postSubscriptionsIdArchive">> =>
      this.op("post", "/api/v1/subscriptions/{id}/archive", { path: { id }, body: { reason } }),
    unarchive: (id: string, reason: ArchiveReason): Promise<Answer<"postSubscriptionsIdUnarchive">> =>
      this.op("post", "/api/v1/subscriptions/{id}/unarchive", { path: { id }, body: { reason } }),
    /** Sends a window of the subscription's deliveries again as a paced batch (followed with `redrives.get`). */
    recover: (id: string, input: RecoverInput): Promise<Answer<"postSubscriptionsIdRecover", 201>> =>
      this.op("post", "/api/v1/subscriptions/{id}/recover", { path: { id }, body: input }) as Promise<RedriveBatch>,
    /** The recover's count by state and a sample (`dryRun: true`); nothing is sent. */
    previewRecover: (id: string, input: RecoverInput): Promise<Answer<"postSubscriptionsIdRecover", 200>> =>
      this.op("post", "/api/v1/subscriptions/{id}/recover", { path: { id }, body: { ...input, dryRun: true } }) as Promise<RecoverPreview>,
    /** Delivers the window's past events the subscription never had, as a paced batch. */
    backfill: (id: string, input: BackfillInput): Promise<Answer<"postSubscriptionsIdBackfill", 201>> =>
      this.op("post", "/api/v1/subscriptions/{id}/backfill", { path: { id }, body: input }) as Promise<RedriveBatch>,
    previewBackfill: (id: string, input: BackfillInput): Promise<Answer<"postSubscriptionsIdBackfill", 200>> =>
      this.op("post", "/api/v1/subscriptions/{id}/backfill", { path: { id }, body: { ...input, dryRun: true } }) as Promise<BackfillPreview>,
  };

  readonly deliveries = {
    list: (query: ListDeliveriesQuery = {}): Promise<Answer<"getDeliveries">> => this.op("get", "/api/v1/deliveries", { query }),
    get: (id: string): Promise<Answer<"getDeliveriesId">> => this.op("get", "/api/v1/deliveries/{id}", { path: { id } }),
    redrive: (id: string, reason: string): Promise<Answer<"postDeliveriesIdRedrive">> =>
      this.op("post", "/api/v1/deliveries/{id}/redrive", { path: { id }, body: { reason } }),
    /** Sends a delivered (or resolved) delivery again: same key and bytes, a fresh signature. */
    resend: (id: string, reason: ResendReason): Promise<Answer<"postDeliveriesIdResend">> =>
      this.op("post", "/api/v1/deliveries/{id}/resend", { path: { id }, body: { reason } }),
    /** Records that a dead letter will not be delivered, and why. */
    resolve: (id: string, input: ResolveInput): Promise<Answer<"postDeliveriesIdResolve">> =>
      this.op("post", "/api/v1/deliveries/{id}/resolve", { path: { id }, body: input }),
  };

  readonly dlq = {
    summary: (query: DlqSummaryQuery = {}): Promise<Answer<"getDlq">> => this.op("get", "/api/v1/dlq", { query }),
    history: (query: DlqHistoryQuery = {}): Promise<Answer<"getDlqHistory">> => this.op("get", "/api/v1/dlq/history", { query }),
    /** Resolves every dead letter the filter matches. */
    resolve: (input: BulkResolveInput): Promise<Extract<Answer<"postDlqResolve">, { status: "resolved" }>> =>
      this.op("post", "/api/v1/dlq/resolve", { body: input }) as Promise<BulkResolveResult>,
    previewResolve: (input: BulkResolveInput): Promise<Extract<Answer<"postDlqResolve">, { status: "preview" }>> =>
      this.op("post", "/api/v1/dlq/resolve", { body: { ...input, dryRun: true } }) as Promise<BulkResolvePreview>,
  };

  readonly tenants = {
    /** One page by id: `{items, nextCursor}`; pass `nextCursor` back as `cursor` for the next (null: there is none). `q` matches id or name. */
    list: (query: ListTenantsQuery = {}): Promise<Answer<"getTenants">> => this.op("get", "/api/v1/tenants", { query }),
    /** Every tenant the query matches, page after page (`for await (const t of client.tenants.listAll())`). */
    listAll: (query: Omit<ListTenantsQuery, "cursor"> = {}): AsyncGenerator<Tenant> => this.everyPage((cursor) => this.tenants.list({ ...query, cursor })),
    /** Registers a district (global admins): subscriptions, users and tokens can then name it. */
    create: (input: CreateTenantInput): Promise<Answer<"postTenants">> => this.op("post", "/api/v1/tenants", { body: input }),
    /** Whom the district's notifications go to (its e-mail addresses and Slack-compatible webhook). */
    getContacts: (tenant: string): Promise<TenantContacts> => this.op("get", "/api/v1/tenants/{id}/contacts", { path: { id: tenant } }),
    /** Replaces them: at most 20 addresses; the webhook is checked like an endpoint URL (a private address is a 400). */
    setContacts: (tenant: string, input: SetContactsInput): Promise<TenantContacts> =>
      this.op("put", "/api/v1/tenants/{id}/contacts", { path: { id: tenant }, body: input }),
  };

  readonly notifications = {
    /** The notices sent to districts (or not, and why), newest first, one page: `{items, nextCursor}`; pass `nextCursor` back as `cursor` for the next (null: there is none). */
    list: (query: ListNotificationsQuery = {}): Promise<Answer<"getNotifications">> => this.op("get", "/api/v1/notifications", { query }),
    /** Every notice, page after page (`for await (const n of client.notifications.listAll())`). */
    listAll: (query: Omit<ListNotificationsQuery, "cursor" | "before"> = {}): AsyncGenerator<Notification> =>
      this.everyPage((cursor) => this.notifications.list({ ...query, cursor })),
    /** The operator's defaults: `dlqThreshold`, what every district without its own threshold follows. */
    getSettings: (): Promise<Answer<"getNotificationsSettings">> => this.op("get", "/api/v1/notifications/settings"),
    /** Sets them (global admins); audited. */
    setSettings: (input: SetNotificationSettingsInput): Promise<Answer<"putNotificationsSettings">> => this.op("put", "/api/v1/notifications/settings", { body: input }),
  };

  readonly portal = {
    /**
     * A district portal link (admins and `portal` tokens): `url` opens once and signs that browser in as the district
     * until `expiresAt`. Redirect the district to it or put it in an iframe; it is shown once, so do not log it.
     */
    createSession: (input: CreatePortalSessionInput): Promise<PortalSession> => this.op("post", "/api/v1/portal/sessions", { body: input }),
    /** Revokes a link, and ends the browser session opened from it. */
    revokeSession: (id: string): Promise<Answer<"deletePortalSessionsId">> => this.op("delete", "/api/v1/portal/sessions/{id}", { path: { id } }),
  };

  readonly eventTypes = {
    /** The event catalog: every type, each with the subscriptions (your tenant's, for a scoped token) that take it. */
    list: (): Promise<Answer<"getEventTypes">> => this.op("get", "/api/v1/event-types"),
    get: (type: string): Promise<EventType> => this.op("get", "/api/v1/event-types/{type}", { path: { type } }),
    /** Catalogues a type (engineers and admins); a schema that does not compile, or an example that fails it, is a 400. */
    create: (input: CreateEventTypeInput): Promise<Answer<"postEventTypes">> => this.op("post", "/api/v1/event-types", { body: input }),
    /** Sets the fields given; `schema: null` removes the schema. */
    update: (type: string, input: UpdateEventTypeInput): Promise<EventType> => this.op("put", "/api/v1/event-types/{type}", { path: { type }, body: input }),
    /** Deletes the type, or, when events of it exist, marks it deprecated: `deleted` and `deprecated` say which. */
    delete: (type: string): Promise<Answer<"deleteEventTypesType">> => this.op("delete", "/api/v1/event-types/{type}", { path: { type } }),
  };

  readonly retention = {
    /** The policy, the oldest data kept, the last runs and the tables' sizes (admins). */
    get: (): Promise<Answer<"getRetention">> => this.op("get", "/api/v1/retention"),
    /** A tenant's override of the retention days; `retentionDays: null` removes it. */
    setOverride: (input: RetentionOverrideInput): Promise<Answer<"putRetention">> => this.op("put", "/api/v1/retention", { body: input }),
    /** Runs retention now (202: the run's record as it starts); `dryRun: true` counts only (200, `id: null`). */
    run: (opts: RunRetentionInput = {}): Promise<Answer<"postRetentionRun">> => this.op("post", "/api/v1/retention/run", { body: opts }),
  };

  readonly erasures = {
    /** Erases one subject key and value's events (global admins); `dryRun: true` counts only. The receipt never repeats the value. */
    create: (input: ErasureInput): Promise<Answer<"postErasures">> => this.op("post", "/api/v1/erasures", { body: input }),
  };

  readonly redrives = {
    /** With `dryRun: true` the preview only (`id: null`, 200); otherwise the running batch (201). */
    create: (input: CreateRedriveInput): Promise<Answer<"postRedrives">> => this.op("post", "/api/v1/redrives", { body: input }),
    /** One page of batches, newest first: `{items, nextCursor, prevCursor}`; pass `nextCursor` back as `cursor` for the older ones (null: there are none). */
    list: (query: ListRedrivesQuery = {}): Promise<Answer<"getRedrives">> => this.op("get", "/api/v1/redrives", { query }),
    /** Every batch the query matches, newest first, page after page (`for await (const b of client.redrives.listAll({ kind: "recover" }))`). */
    listAll: (query: Omit<ListRedrivesQuery, "cursor"> = {}): AsyncGenerator<RedriveBatch> => this.everyPage((cursor) => this.redrives.list({ ...query, cursor })),
    get: (id: string): Promise<Answer<"getRedrivesId">> => this.op("get", "/api/v1/redrives/{id}", { path: { id } }),
    cancel: (id: string, reason?: string): Promise<Answer<"postRedrivesIdCancel">> =>
      this.op("post", "/api/v1/redrives/{id}/cancel", { path: { id }, body: reason === undefined ? {} : { reason } }),
  };
}
