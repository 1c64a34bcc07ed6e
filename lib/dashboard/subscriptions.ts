// Subscription health: success rate and latency from attempt_stats_hour and
// attempt_stats_minute (the sampler's rollups), queue counts from
// delivery_state_counts (trigger-kept, migration 0006) with the oldest dead
// letter from deliveries_dlq, last error and whether it is failing now from
// the newest attempts (attempts_sub_started) and the failure window's run on
// the subscription row. No scan of queue or delivered rows. Every ledger
// statement is lib/ledger's; this module composes them with the subscription rows.
import "server-only";
import { z } from "zod";
import { AppError, notFound } from "../errors";
import { quantileFromHistogram } from "../ledger/read/latency";
import type { DeliveryLite } from "./describe";
import { DELIVERY_STATES } from "../ledger/states";
import { iso, ledgerDb, queryRows, sql, type LedgerDb } from "../ledger/read/db";
import { findAttemptStatsSince, findOutcomeSeries, type StatRow } from "../ledger/read/attempt-stats";
import { findAnswerGroups, findRecentAnswers, type RecentAnswers } from "../ledger/read/endpoint-answers";
import { findQueueCounts } from "../ledger/sql/counts";
import { findDeliveries, findRecentEventTypes, withAttempts } from "../ledger/sql/find-deliveries";
import { findPublishedEventTypes } from "../ledger/sql/archive";
import { LIST_EXCERPT_CHARS } from "./lookup";
import { GLOBAL_SCOPE, isScoped, scopeWhere, type Scope } from "../tenants/scope";
import { pausedReasonOf, type PausedReason } from "../subscriptions/failure-policy";
import { findSubscriptionPage, type SubscriptionPage, type SubscriptionPageRow } from "../subscriptions/list";
import type { TListSubscriptions } from "../subscriptions/subscription-input";
import { displayUrl } from "../display-url";

type WindowStats = { attempts: number; delivered: number; successRate: number | null; p50Ms: number | null; p95Ms: number | null };
export type SubscriptionHealth = {
  id: string;
  name: string;
  tenant: string | null;
  /** The endpoint URL with its credentials masked (lib/display-url.ts): what every reader is shown. */
  url: string;
  state: string;
  stateReason: string | null;
  /** Why it is paused, while it is: an operator's pause, or the failure window's (probed, resumed by itself). */
  pausedReason: PausedReason | null;
  /** Set while archived: no new deliveries; listed only when asked for. */
  archivedAt: string | null;
  archiveReason: string | null;
  archivedBy: string | null;
  h1: WindowStats;
  h24: WindowStats;
  counts: { pending: number; scheduled: number; inFlight: number; deadLetter: number; delivered24h: number };
  dlqOldestAt: string | null;
  /** The newest failed attempt: its time and answer (`message` one line, `excerpt` the stored answer whole). */
  lastError: { at: string; statusCode: number | null; errorClass: string | null; message: string | null; excerpt: string | null } | null;
  /**
   * Set while the endpoint is failing now: its newest attempts all failed, FAILING_RUN of them in a row or every one
   * since FAILING_QUIET_MS ago. `since`: the first failure of the run (the failure window's, when it keeps one);
   * `attempts`: how many in a row (at least: the list reads the newest 500).
   */
  failing: { since: string; attempts: number } | null;
  /**
   * What its newest delivery attempts did, from the same read as `failing` (so words built on it cannot contradict
   * "Failing since"): `failed` in a row since `failedSince` (`failing`'s figures while failing; else the one or two
   * failures after the last success), and when the newest delivered one began. All empty: no attempt in the last
   * 30 days. Test sends and probes are not delivery attempts and count in neither.
   */
  lastAttempts: { failed: number; failedSince: string | null; deliveredAt: string | null };
  /**
   * While failing: when the endpoint answered a probe with a 2xx after the newest failed attempt. Deliveries have not
   * shown it back yet (none has gone out since), so "Failing since" stays, with this beside it.
   */
  answeredCheckAt: string | null;
};

/** This many failed attempts in a row, with no success between, are an outage, however recent the last success. */
const FAILING_RUN = 3;
/** Fewer failures in a row are an outage too once nothing has succeeded for this long. */
const FAILING_QUIET_MS = 5 * 60_000;

// Pending and scheduled counts are reported up to COUNT_CAP + 1: the pages show a bigger backlog as "10,000+".
export const COUNT_CAP = 10_000;

function toWindow(r: StatRow | undefined): WindowStats {
  if (!r || r.attempts === 0) return { attempts: 0, delivered: 0, successRate: null, p50Ms: null, p95Ms: null };
  const hist = r.hist ?? [];
  return {
    attempts: r.attempts,
    delivered: r.delivered,
    successRate: r.delivered / r.attempts,
    p50Ms: quantileFromHistogram(hist, 0.5),
    p95Ms: quantileFromHistogram(hist, 0.95),
  };
}

async function queueCounts(db: LedgerDb, ids: string[]) {
  // Pending and scheduled stop at COUNT_CAP + 1 so the pages show "10,000+".
  const rows = await findQueueCounts(db, ids);
  const out = new Map<string, { pending: number; scheduled: number; inFlight: number; deadLetter: number; oldest: string | null }>();
  for (const id of ids) out.set(id, { pending: 0, scheduled: 0, inFlight: 0, deadLetter: 0, oldest: null });
  for (const r of rows) {
    const c = out.get(r.subscriptionId)!;
    if (r.state === "pending") c.pending += r.n;
    else if (r.state === "scheduled") c.scheduled += r.n;
    else if (r.state === "in_flight") c.inFlight += r.n;
    else if (r.state === "dead_letter") {
      c.deadLetter += r.n;
      const oldest = iso(r.oldestDeadLetterAt);
      if (oldest && (!c.oldest || oldest < c.oldest)) c.oldest = oldest;
    }
  }
  for (const c of out.values()) {
    c.pending = Math.min(c.pending, COUNT_CAP + 1);
    c.scheduled = Math.min(c.scheduled, COUNT_CAP + 1);
  }
  return out;
}

async function recentAnswers(db: LedgerDb, ids: string[], now: Date) {
  return new Map((await findRecentAnswers(db, ids, now)).map((r) => [r.subscription_id, r]));
}

function lastErrorOf(r: RecentAnswers | undefined): SubscriptionHealth["lastError"] {
  if (!r?.started_at) return null;
  return { at: iso(r.started_at)!, statusCode: r.status_code, errorClass: r.error_class, message: r.message, excerpt: r.excerpt };
}

/**
 * Failing now: the newest attempts failed (a run after the last success), and either FAILING_RUN or more of them, or
 * none succeeded in the last FAILING_QUIET_MS; one or two failures among steady successes are not an outage. The run's
 * start is the failure window's (`failing_since`, exact however long the run) when the subscription's policy keeps
 * one and the attempts read show none earlier, else the first failure after the last success among them.
 */
function failingOf(s: Pick<SubRow, "failing_since" | "failing_attempts">, r: RecentAnswers | undefined, now: Date): SubscriptionHealth["failing"] {
  if (!r || r.run_attempts === 0 || !r.run_since) return null;
  const quiet = !r.last_ok_at || now.getTime() - new Date(r.last_ok_at).getTime() >= FAILING_QUIET_MS;
  if (r.run_attempts < FAILING_RUN && !quiet) return null;
  if (!(s.failing_since && s.failing_attempts > 0)) return { since: iso(r.run_since)!, attempts: r.run_attempts };
  // The window's run restarts when the subscription is resumed (by hand, or by a probe's 2xx while deliveries still
  // fail): the attempts read may show the same failures going back further, and the earlier start is the outage's.
  const since = Math.min(new Date(s.failing_since).getTime(), new Date(r.run_since).getTime());
  return { since: new Date(since).toISOString(), attempts: Math.max(s.failing_attempts, r.run_attempts) };
}

function answeredCheckOf(
  s: Pick<SubRow, "last_probe_at" | "last_probe_status">,
  failing: SubscriptionHealth["failing"],
  lastError: SubscriptionHealth["lastError"],
): string | null {
  const at = iso(s.last_probe_at);
  const ok = s.last_probe_status !== null && s.last_probe_status >= 200 && s.last_probe_status < 300;
  return failing && at && ok && (!lastError || at > lastError.at) ? at : null;
}

function lastAttemptsOf(r: RecentAnswers | undefined, failing: SubscriptionHealth["failing"]): SubscriptionHealth["lastAttempts"] {
  const deliveredAt = iso(r?.last_ok_at);
  if (failing) return { failed: failing.attempts, failedSince: failing.since, deliveredAt };
  return { failed: r?.run_attempts ?? 0, failedSince: iso(r?.run_since), deliveredAt };
}

type SubRow = SubscriptionPageRow;

/**
 * Subscriptions by id (or one tenant's, at most 500) with their health; archived ones only when `archived` (or asked
 * for by id). `scope`: a scoped caller's list holds its tenant's subscriptions only, whatever `tenant` or `ids` say;
 * every count and chart below is read for these ids, so the boundary is this one condition. The Subscriptions page
 * reads a page at a time instead (findSubscriptionHealthPage).
 */
export async function findSubscriptionHealth(
  opts: { tenant?: string; ids?: string[]; archived?: boolean | "true" | "false"; now?: Date; scope?: Scope } = {},
  db: LedgerDb = ledgerDb(),
): Promise<SubscriptionHealth[]> {
  const withArchived = opts.archived === true || opts.archived === "true" || Boolean(opts.ids);
  const subs = await queryRows<SubRow>(
    db,
    sql`SELECT id, name, tenant, url, state, state_reason, paused_reason, archived_at, archive_reason, archived_by, failing_since, failing_attempts, last_probe_at, last_probe_status
          FROM subscriptions
         WHERE (${opts.tenant ?? null}::text IS NULL OR tenant = ${opts.tenant ?? null}) AND (${opts.ids ?? null}::text[] IS NULL OR id = ANY(${opts.ids ?? null}::text[]))
           AND (${withArchived} OR archived_at IS NULL) AND ${scopeWhere(opts.scope ?? GLOBAL_SCOPE, "tenant")}
         ORDER BY tenant NULLS LAST, name LIMIT 500`,
  );
  return withHealth(db, subs, opts.now);
}

/**
 * One page of the health list (the Subscriptions page, a district's overview): the page's rows are chosen first
 * (lib/subscriptions/list.ts: search, filters, order, cursor), and the figures are read for those ids only, so a
 * poll costs one page whatever the number of subscriptions.
 */
export async function findSubscriptionHealthPage(
  opts: TListSubscriptions & { now?: Date; scope?: Scope },
  db: LedgerDb = ledgerDb(),
): Promise<SubscriptionPage<SubscriptionHealth>> {
  const { now, scope, ...query } = opts;
  const page = await findSubscriptionPage(db, query, scope ?? GLOBAL_SCOPE);
  return { ...page, items: await withHealth(db, page.items, now) };
}

/**
 * The 1 h and 24 h figures, queue counts, oldest dead letter, last error and whether failing now, of these
 * subscriptions, in their order: read for these ids only (a page), never a scan of every subscription.
 */
async function withHealth(db: LedgerDb, subs: SubRow[], at?: Date): Promise<SubscriptionHealth[]> {
  const ids = subs.map((s) => s.id);
  if (ids.length === 0) return [];
  const now = at ?? new Date();
  const [h1, h24, counts, recent] = await Promise.all([
    findAttemptStatsSince(db, ids, new Date(now.getTime() - 3600_000)),
    findAttemptStatsSince(db, ids, new Date(now.getTime() - 86400_000)),
    queueCounts(db, ids),
    recentAnswers(db, ids, now),
  ]);
  return subs.map((s) => {
    const c = counts.get(s.id)!;
    const failing = failingOf(s, recent.get(s.id), now);
    const lastError = lastErrorOf(recent.get(s.id));
    return {
      id: s.id,
      name: s.name,
      tenant: s.tenant,
      url: displayUrl(s.url),
      state: s.state,
      stateReason: s.state_reason,
      pausedReason: pausedReasonOf(s.state, s.paused_reason),
      archivedAt: iso(s.archived_at),
      archiveReason: s.archive_reason,
      archivedBy: s.archived_by,
      h1: toWindow(h1.get(s.id)),
      h24: toWindow(h24.get(s.id)),
      counts: { pending: c.pending, scheduled: c.scheduled, inFlight: c.inFlight, deadLetter: c.deadLetter, delivered24h: h24.get(s.id)?.delivered ?? 0 },
      dlqOldestAt: c.oldest,
      lastError,
      failing,
      lastAttempts: lastAttemptsOf(recent.get(s.id), failing),
      answeredCheckAt: answeredCheckOf(s, failing, lastError),
    };
  });
}

export type SubscriptionOverview = SubscriptionHealth & {
  /** The URL as stored, for the edit form of a viewer who may change the subscription; null for anyone else. */
  storedUrl: string | null;
  eventTypes: string[];
  retryPolicy: unknown;
  rateLimitPerSecond: number | null;
  maxConcurrency: number;
  series: { at: string; delivered: number; retried: number; deadLettered: number; abandoned: number }[];
  seriesBucketMinutes: number;
  knownEventTypes: string[];
};

export const ZRange = z.enum(["1h", "6h", "24h", "7d"]);
const RANGE: Record<z.infer<typeof ZRange>, { ms: number; bucketMin: number }> = {
  "1h": { ms: 3600_000, bucketMin: 1 },
  "6h": { ms: 6 * 3600_000, bucketMin: 5 },
  "24h": { ms: 86400_000, bucketMin: 30 },
  "7d": { ms: 7 * 86400_000, bucketMin: 180 },
};

/**
 * One subscription: health, configuration and the outcomes-over-time series. `storedUrl`: the viewer may change the
 * subscription, so its edit form gets the URL as stored (credentials and all).
 */
export async function getSubscriptionOverview(
  opts: { id: string; range?: z.infer<typeof ZRange>; now?: Date; scope?: Scope; storedUrl?: boolean },
  db: LedgerDb = ledgerDb(),
): Promise<SubscriptionOverview> {
  const scope = opts.scope ?? GLOBAL_SCOPE;
  const rows = await queryRows<{ url: string; event_types: string[]; retry_policy: unknown; rate_limit_per_second: number | null; max_concurrency: number }>(
    db,
    sql`SELECT url, event_types, retry_policy, rate_limit_per_second, max_concurrency FROM subscriptions WHERE id = ${opts.id} AND ${scopeWhere(scope, "tenant")}`,
  );
  if (!rows[0]) throw notFound("Subscription", opts.id);
  const now = opts.now ?? new Date();
  const range = RANGE[opts.range ?? "24h"];
  const since = new Date(now.getTime() - range.ms);
  const [[health], series, knownEventTypes] = await Promise.all([
    findSubscriptionHealth({ ids: [opts.id], now: opts.now, scope }, db),
    findOutcomeSeries(db, opts.id, since, range.bucketMin),
    // Event types seen recently, for the deliveries filter.
    findRecentEventTypes(db, opts.id),
  ]);
  // Fill empty buckets so the chart's time axis is continuous.
  const step = range.bucketMin * 60_000;
  const byAt = new Map(series.map((r) => [new Date(r.at).getTime(), r]));
  const filled = [];
  for (let t = Math.floor(since.getTime() / step) * step; t <= now.getTime(); t += step) {
    const r = byAt.get(t);
    filled.push({
      at: new Date(t).toISOString(),
      delivered: r?.delivered ?? 0,
      retried: r?.retried ?? 0,
      deadLettered: r?.dead_lettered ?? 0,
      abandoned: r?.abandoned ?? 0,
    });
  }
  return {
    ...health,
    storedUrl: opts.storedUrl ? rows[0].url : null,
    eventTypes: rows[0].event_types,
    retryPolicy: rows[0].retry_policy,
    rateLimitPerSecond: rows[0].rate_limit_per_second,
    maxConcurrency: rows[0].max_concurrency,
    series: filled,
    seriesBucketMinutes: range.bucketMin,
    knownEventTypes,
  };
}

export const ZSubscriptionDeliveries = z.object({
  subscriptionId: z.string().min(1).max(64),
  state: z.enum(DELIVERY_STATES).optional(),
  eventType: z.string().max(100).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  statusCode: z.coerce.number().int().min(100).max(599).optional(),
  errorClass: z.string().max(50).optional(),
  cursor: z
    .string()
    .regex(/^dlv_[0-9a-f]{26}$/, "not a cursor returned by this page")
    .optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export type TSubscriptionDeliveries = z.input<typeof ZSubscriptionDeliveries>;

/** A time-ordered id's lower/upper bound for a time (ids embed epoch microseconds: hl_new_id). */
function idBoundFor(t: Date, prefix = "dlv_"): string {
  return prefix + (t.getTime() * 1000).toString(16).padStart(14, "0");
}

/**
 * The subscription's deliveries, newest first, filtered, one page at a time.
 * Walks deliveries_sub_timeline (subscription_id, id DESC); the time range is
 * turned into an id range because ids are time-ordered.
 */
export async function findSubscriptionDeliveries(
  opts: TSubscriptionDeliveries & { scope?: Scope },
  db: LedgerDb = ledgerDb(),
): Promise<{ items: DeliveryLite[]; nextCursor: string | null }> {
  const o = ZSubscriptionDeliveries.parse(opts);
  const scope = opts.scope ?? GLOBAL_SCOPE;
  // Another tenant's subscription does not exist for a scoped caller: 404, as its overview answers.
  if (isScoped(scope)) await assertSubscriptionInScope(db, o.subscriptionId, scope);
  if (o.from && o.to && new Date(o.from) > new Date(o.to)) throw new AppError("bad_request", "from: the range starts after it ends.");
  const page = await findDeliveries(db, {
    subscriptionId: o.subscriptionId,
    state: o.state,
    eventType: o.eventType,
    lastStatusCode: o.statusCode,
    lastErrorClass: o.errorClass,
    idAtLeast: o.from ? idBoundFor(new Date(o.from)) : undefined,
    idBelow: o.to ? idBoundFor(new Date(o.to)) : undefined,
    cursor: o.cursor,
    limit: o.limit,
    scope,
  });
  return { items: await withAttempts(db, page.items, { excerptChars: LIST_EXCERPT_CHARS }), nextCursor: page.nextCursor };
}

/** `deadLettered`: attempts of the group that dead-lettered their delivery; none for answers that were retried and passed. */
export type AnswerGroup = {
  statusCode: number | null;
  errorClass: string | null;
  signature: string;
  count: number;
  deadLettered: number;
  firstAt: string;
  lastAt: string;
};

/**
 * What the endpoint has been answering: its newest failed attempts grouped by
 * status and response signature ("340 × 422 missing field term_id since
 * Tuesday"). Reads at most `window` newest attempts (attempts_sub_started).
 */
export async function findEndpointAnswers(
  opts: { subscriptionId: string; window?: number; scope?: Scope },
  db: LedgerDb = ledgerDb(),
): Promise<{ groups: AnswerGroup[]; examined: number }> {
  if (opts.scope && isScoped(opts.scope)) await assertSubscriptionInScope(db, opts.subscriptionId, opts.scope);
  const window = Math.min(opts.window ?? 5000, 20_000);
  const { groups, examined } = await findAnswerGroups(db, opts.subscriptionId, window);
  return {
    examined,
    groups: groups.map((r) => ({
      statusCode: r.status_code,
      errorClass: r.error_class,
      signature: r.signature,
      count: r.count,
      deadLettered: r.dead_lettered,
      firstAt: iso(r.first_at)!,
      lastAt: iso(r.last_at)!,
    })),
  };
}

/** How many tenants the subscriptions page suggests from the server; an admin's box asks GET /api/v1/tenants as it types. */
export const TENANT_SUGGESTIONS = 500;

/**
 * Tenants that have a subscription, the first TENANT_SUGGESTIONS by id, for the subscriptions page's suggestions (a
 * scoped caller: its own, if it has one), and whether there are more, so the page can say its list is cut.
 */
export async function findTenants(db: LedgerDb = ledgerDb(), scope: Scope = GLOBAL_SCOPE): Promise<{ ids: string[]; more: boolean }> {
  const rows = await queryRows<{ tenant: string }>(
    db,
    sql`SELECT DISTINCT tenant FROM subscriptions WHERE tenant IS NOT NULL AND ${scopeWhere(scope, "tenant")} ORDER BY 1 LIMIT ${TENANT_SUGGESTIONS + 1}`,
  );
  return { ids: rows.slice(0, TENANT_SUGGESTIONS).map((r) => r.tenant), more: rows.length > TENANT_SUGGESTIONS };
}

/** 404 unless the subscription exists in `scope` (another tenant's is not revealed). */
async function assertSubscriptionInScope(db: LedgerDb, id: string, scope: Scope): Promise<void> {
  const rows = await queryRows<{ id: string }>(db, sql`SELECT id FROM subscriptions WHERE id = ${id} AND ${scopeWhere(scope, "tenant")}`);
  if (rows.length === 0) throw notFound("Subscription", id);
}

/** Event types the subscription form lists to tick: enough to scroll through, few enough for one page to carry. */
const EVENT_TYPE_CHOICES = 500;

/**
 * The event types for the subscription forms' picker: the event catalog's (global; deprecated ones left out) and the
 * types producers have published (a district's own, for a district's viewer), the first EVENT_TYPE_CHOICES by name.
 * `more`: there are others (the form says so; any type may still be typed). One more than the list is read from
 * each source, so the first of their union are the first of all.
 */
export async function findEventTypeChoices(scope: Scope = GLOBAL_SCOPE, db: LedgerDb = ledgerDb()): Promise<{ types: string[]; more: boolean }> {
  const [catalogued, published] = await Promise.all([
    queryRows<{ type: string }>(db, sql`SELECT type FROM event_types WHERE NOT deprecated ORDER BY type LIMIT ${EVENT_TYPE_CHOICES + 1}::int`),
    findPublishedEventTypes(db, EVENT_TYPE_CHOICES + 1, scope.tenantId),
  ]);
  const all = [...new Set([...catalogued.map((r) => r.type), ...published])].sort();
  return { types: all.slice(0, EVENT_TYPE_CHOICES), more: all.length > EVENT_TYPE_CHOICES };
}
