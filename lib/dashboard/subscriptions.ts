// Subscription health: success rate and latency from attempt_stats_hour and
// attempt_stats_minute (the sampler's rollups), queue counts from
// delivery_state_counts (trigger-kept, migration 0006) with the oldest dead
// letter from deliveries_dlq, last error from the newest attempts
// (attempts_sub_started). No scan of queue or delivered rows.
import { z } from "zod";
import { AppError, notFound } from "../errors";
import { quantileFromHistogram, STATS_HOUR_MS, sumHistogramsSql } from "./latency";
import { attemptsFor, db, DELIVERY_COLUMNS, iso, toDeliveryLite, type Db, type DeliveryRow } from "./sql";
import type { DeliveryLite } from "./describe";
import { DELIVERY_STATES } from "../ledger/states";

export type WindowStats = { attempts: number; delivered: number; successRate: number | null; p50Ms: number | null; p95Ms: number | null };
export type SubscriptionHealth = {
  id: string;
  name: string;
  tenant: string | null;
  url: string;
  state: string;
  stateReason: string | null;
  h1: WindowStats;
  h24: WindowStats;
  counts: { pending: number; scheduled: number; inFlight: number; deadLetter: number; delivered24h: number };
  dlqOldestAt: string | null;
  lastError: { at: string; statusCode: number | null; errorClass: string | null; message: string | null } | null;
};

// Pending and scheduled counts are reported up to COUNT_CAP + 1: the pages show a bigger backlog as "10,000+".
export const COUNT_CAP = 10_000;

type StatRow = { subscription_id: string; attempts: number; delivered: number; hist: number[] | null };

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

/**
 * Per-subscription attempt totals and summed latency histograms since `since`:
 * whole UTC hours from attempt_stats_hour, the partial hour before the first
 * whole one from attempt_stats_minute (both by primary key). The same sums as
 * reading every minute row since `since`, because an hour row is the sum of
 * its minute rows; one row per subscription leaves the database.
 */
async function statsSince(pool: Db, ids: string[], since: Date): Promise<Map<string, StatRow>> {
  const firstWholeHour = new Date(Math.ceil(since.getTime() / STATS_HOUR_MS) * STATS_HOUR_MS);
  const { rows } = await pool.query<StatRow>(
    `SELECT subscription_id, sum(attempts)::int AS attempts, sum(delivered)::int AS delivered,
            ${sumHistogramsSql("latency_hist")} AS hist
     FROM (
       SELECT subscription_id, attempts, delivered, latency_hist FROM attempt_stats_minute
       WHERE subscription_id = ANY($1::text[]) AND bucket >= $2 AND bucket < $3
       UNION ALL
       SELECT subscription_id, attempts, delivered, latency_hist FROM attempt_stats_hour
       WHERE subscription_id = ANY($1::text[]) AND bucket >= $3
     ) w
     GROUP BY subscription_id`,
    [ids, since, firstWholeHour],
  );
  return new Map(rows.map((r) => [r.subscription_id, r]));
}

async function queueCounts(pool: Db, ids: string[]) {
  // Counts from delivery_state_counts, summed over backends as every reader of
  // it does (lib/metrics/ledger.ts); pending and scheduled still stop at
  // COUNT_CAP + 1 so the pages show "10,000+" as before. The oldest dead
  // letter: one seek per (subscription, reason) on deliveries_dlq
  // (subscription_id, dead_letter_reason, dead_lettered_at); reason '' is a
  // NULL reason (or, in principle, an empty one).
  const { rows } = await pool.query<{ subscription_id: string; state: string; n: string; oldest: Date | null }>(
    `SELECT c.subscription_id, c.state, c.n,
            CASE WHEN c.state <> 'dead_letter' THEN NULL
                 WHEN c.reason = '' THEN least(
                   (SELECT min(d.dead_lettered_at) FROM deliveries d
                    WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason IS NULL),
                   (SELECT min(d.dead_lettered_at) FROM deliveries d
                    WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = ''))
                 ELSE (SELECT min(d.dead_lettered_at) FROM deliveries d
                       WHERE d.subscription_id = c.subscription_id AND d.state = 'dead_letter' AND d.dead_letter_reason = c.reason)
            END AS oldest
     FROM (SELECT subscription_id, state, reason, sum(n)::bigint AS n FROM delivery_state_counts
           WHERE subscription_id = ANY($1::text[]) AND state IN ('pending', 'scheduled', 'in_flight', 'dead_letter')
           GROUP BY 1, 2, 3 HAVING sum(n) <> 0) c`,
    [ids],
  );
  const out = new Map<string, { pending: number; scheduled: number; inFlight: number; deadLetter: number; oldest: string | null }>();
  for (const id of ids) out.set(id, { pending: 0, scheduled: 0, inFlight: 0, deadLetter: 0, oldest: null });
  for (const r of rows) {
    const c = out.get(r.subscription_id)!;
    const n = Number(r.n);
    if (r.state === "pending") c.pending += n;
    else if (r.state === "scheduled") c.scheduled += n;
    else if (r.state === "in_flight") c.inFlight += n;
    else if (r.state === "dead_letter") {
      c.deadLetter += n;
      const oldest = iso(r.oldest);
      if (oldest && (!c.oldest || oldest < c.oldest)) c.oldest = oldest;
    }
  }
  for (const c of out.values()) {
    c.pending = Math.min(c.pending, COUNT_CAP + 1);
    c.scheduled = Math.min(c.scheduled, COUNT_CAP + 1);
  }
  return out;
}

async function lastErrors(pool: Db, ids: string[]) {
  // The newest failed attempt among each subscription's last 500 (attempts_sub_started).
  const { rows } = await pool.query(
    `SELECT s.id AS subscription_id, e.started_at, e.status_code, e.error_class, coalesce(e.error_message, left(e.response_excerpt, 120)) AS message
     FROM unnest($1::text[]) AS s(id)
     CROSS JOIN LATERAL (
       SELECT * FROM (SELECT started_at, status_code, error_class, error_message, response_excerpt, outcome
                      FROM attempts a WHERE a.subscription_id = s.id ORDER BY started_at DESC LIMIT 500) recent
       WHERE outcome <> 'delivered' ORDER BY started_at DESC LIMIT 1
     ) e`,
    [ids],
  );
  return new Map(rows.map((r) => [r.subscription_id as string, { at: iso(r.started_at)!, statusCode: r.status_code, errorClass: r.error_class, message: r.message }]));
}

export const ZSubscriptionHealthQuery = z.object({ tenant: z.string().trim().min(1).max(200).optional() });

/** Every subscription (optionally one tenant's) with its health. */
export async function findSubscriptionHealth(opts: { tenant?: string; ids?: string[]; now?: Date } = {}, pool: Db = db()): Promise<SubscriptionHealth[]> {
  const { rows: subs } = await pool.query(
    `SELECT id, name, tenant, url, state, state_reason FROM subscriptions
     WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text[] IS NULL OR id = ANY($2))
     ORDER BY tenant NULLS LAST, name LIMIT 500`,
    [opts.tenant ?? null, opts.ids ?? null],
  );
  const ids = subs.map((s) => s.id as string);
  if (ids.length === 0) return [];
  const now = opts.now ?? new Date();
  const [h1, h24, counts, errors] = await Promise.all([
    statsSince(pool, ids, new Date(now.getTime() - 3600_000)),
    statsSince(pool, ids, new Date(now.getTime() - 86400_000)),
    queueCounts(pool, ids),
    lastErrors(pool, ids),
  ]);
  return subs.map((s) => {
    const c = counts.get(s.id)!;
    return {
      id: s.id,
      name: s.name,
      tenant: s.tenant,
      url: s.url,
      state: s.state,
      stateReason: s.state_reason,
      h1: toWindow(h1.get(s.id)),
      h24: toWindow(h24.get(s.id)),
      counts: { pending: c.pending, scheduled: c.scheduled, inFlight: c.inFlight, deadLetter: c.deadLetter, delivered24h: h24.get(s.id)?.delivered ?? 0 },
      dlqOldestAt: c.oldest,
      lastError: errors.get(s.id) ?? null,
    };
  });
}

export type SubscriptionOverview = SubscriptionHealth & {
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

/** One subscription: health, configuration and the outcomes-over-time series. */
export async function getSubscriptionOverview(opts: { id: string; range?: z.infer<typeof ZRange>; now?: Date }, pool: Db = db()): Promise<SubscriptionOverview> {
  const { rows } = await pool.query(`SELECT event_types, retry_policy, rate_limit_per_second, max_concurrency FROM subscriptions WHERE id = $1`, [opts.id]);
  if (!rows[0]) throw notFound("Subscription", opts.id);
  const [health] = await findSubscriptionHealth({ ids: [opts.id], now: opts.now }, pool);
  const now = opts.now ?? new Date();
  const range = RANGE[opts.range ?? "24h"];
  const since = new Date(now.getTime() - range.ms);
  const { rows: series } = await pool.query(
    `SELECT date_bin(make_interval(mins => $3), bucket, TIMESTAMPTZ '2000-01-01') AS at,
            sum(delivered)::int AS delivered, sum(retried)::int AS retried, sum(dead_lettered)::int AS dead_lettered, sum(abandoned)::int AS abandoned
     FROM attempt_stats_minute WHERE subscription_id = $1 AND bucket >= $2
     GROUP BY 1 ORDER BY 1`,
    [opts.id, since, range.bucketMin],
  );
  // Fill empty buckets so the chart's time axis is continuous.
  const step = range.bucketMin * 60_000;
  const byAt = new Map(series.map((r) => [new Date(r.at).getTime(), r]));
  const filled = [];
  for (let t = Math.floor(since.getTime() / step) * step; t <= now.getTime(); t += step) {
    const r = byAt.get(t);
    filled.push({ at: new Date(t).toISOString(), delivered: r?.delivered ?? 0, retried: r?.retried ?? 0, deadLettered: r?.dead_lettered ?? 0, abandoned: r?.abandoned ?? 0 });
  }
  // Event types seen recently, for the deliveries filter (deliveries_sub_timeline, newest 2,000).
  const { rows: types } = await pool.query(
    `SELECT DISTINCT event_type FROM (SELECT event_type FROM deliveries WHERE subscription_id = $1 ORDER BY id DESC LIMIT 2000) x ORDER BY 1`,
    [opts.id],
  );
  return {
    ...health,
    eventTypes: rows[0].event_types,
    retryPolicy: rows[0].retry_policy,
    rateLimitPerSecond: rows[0].rate_limit_per_second,
    maxConcurrency: rows[0].max_concurrency,
    series: filled,
    seriesBucketMinutes: range.bucketMin,
    knownEventTypes: types.map((t) => t.event_type),
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
  cursor: z.string().regex(/^dlv_[0-9a-f]{26}$/, "not a cursor returned by this page").optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export type TSubscriptionDeliveries = z.input<typeof ZSubscriptionDeliveries>;

/** A time-ordered id's lower/upper bound for a time (ids embed epoch microseconds: hl_new_id). */
export function idBoundFor(t: Date, prefix = "dlv_"): string {
  return prefix + (t.getTime() * 1000).toString(16).padStart(14, "0");
}

/**
 * The subscription's deliveries, newest first, filtered, one page at a time.
 * Walks deliveries_sub_timeline (subscription_id, id DESC); the time range is
 * turned into an id range because ids are time-ordered.
 */
export async function findSubscriptionDeliveries(opts: TSubscriptionDeliveries, pool: Db = db()): Promise<{ items: DeliveryLite[]; nextCursor: string | null }> {
  const o = ZSubscriptionDeliveries.parse(opts);
  const where = ["d.subscription_id = $1"];
  const args: unknown[] = [o.subscriptionId];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replace("?", `$${args.length}`));
  };
  if (o.state) add("d.state = ?", o.state);
  if (o.eventType) add("d.event_type = ?", o.eventType);
  if (o.statusCode) add("d.last_status_code = ?", o.statusCode);
  if (o.errorClass) add("d.last_error_class = ?", o.errorClass);
  if (o.from) add("d.id >= ?", idBoundFor(new Date(o.from)));
  if (o.to) add("d.id < ?", idBoundFor(new Date(o.to)));
  if (o.cursor) add("d.id < ?", o.cursor);
  if (o.from && o.to && new Date(o.from) > new Date(o.to)) throw new AppError("bad_request", "from: the range starts after it ends.");
  args.push(o.limit + 1);
  const { rows } = await pool.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
     WHERE ${where.join(" AND ")} ORDER BY d.id DESC LIMIT $${args.length}`,
    args,
  );
  const page = rows.slice(0, o.limit);
  const attempts = await attemptsFor(pool, page.map((r) => r.id));
  return {
    items: page.map((r) => toDeliveryLite(r, attempts.get(r.id) ?? [])),
    nextCursor: rows.length > o.limit ? page[page.length - 1].id : null,
  };
}

export type AnswerGroup = { statusCode: number | null; errorClass: string | null; signature: string; count: number; firstAt: string; lastAt: string };

/**
 * What the endpoint has been answering: its newest failed attempts grouped by
 * status and response signature ("340 × 422 missing field term_id since
 * Tuesday"). Reads at most `window` newest attempts (attempts_sub_started).
 */
export async function findEndpointAnswers(opts: { subscriptionId: string; window?: number }, pool: Db = db()): Promise<{ groups: AnswerGroup[]; examined: number }> {
  const window = Math.min(opts.window ?? 5000, 20_000);
  const { rows } = await pool.query(
    `WITH recent AS (
       SELECT started_at, outcome, status_code, error_class,
              -- the signature: the answer's first line, digits and ids folded so variants group together
              coalesce(nullif(regexp_replace(left(split_part(coalesce(response_excerpt, error_message, ''), E'\\n', 1), 120),
                               '[0-9a-f]{8,}|\\d{4,}', '#', 'g'), ''), '') AS signature
       FROM attempts WHERE subscription_id = $1 ORDER BY started_at DESC LIMIT $2
     )
     SELECT status_code, error_class, signature, count(*)::int AS count, min(started_at) AS first_at, max(started_at) AS last_at,
            (SELECT count(*)::int FROM recent) AS examined
     FROM recent WHERE outcome <> 'delivered'
     GROUP BY 1, 2, 3 ORDER BY count DESC, last_at DESC LIMIT 20`,
    [opts.subscriptionId, window],
  );
  const examined = rows[0]?.examined ?? (await pool.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM attempts WHERE subscription_id = $1 LIMIT $2) x`, [opts.subscriptionId, window])).rows[0].n;
  return {
    examined,
    groups: rows.map((r) => ({ statusCode: r.status_code, errorClass: r.error_class, signature: r.signature, count: r.count, firstAt: iso(r.first_at)!, lastAt: iso(r.last_at)! })),
  };
}
