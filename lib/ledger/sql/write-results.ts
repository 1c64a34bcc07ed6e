// Writing attempt results back to the ledger, raw `pg` (docs/PLATFORM.md).
// Every write is guarded in SQL by state, lease owner and claim token
// (docs/DESIGN.md invariant 3); each result leaves one attempt row.
import "server-only";
import type pg from "pg";
import { GONE_CTES, failureWindowCtes } from "./subscription-state";
import { outsideFrozen, type Freeze } from "./freeze";

/**
 * The longest an endpoint's Retry-After holds the whole endpoint (subscriptions.held_until, and the worker's own
 * RateLimiter). A longer request still schedules the delivery that got it as asked (lib/ledger/backoff.ts); the
 * endpoint's other deliveries are tried again after this, each try one attempt, so an endpoint that asked for a
 * week by mistake does not go silent for a week.
 */
export const MAX_ENDPOINT_HOLD_SECONDS = 3600;

export type AttemptResult = {
  id: string;
  /** The claimed row's eventAt (ClaimedRow): the month the delivery is updated in. */
  eventAt: string;
  claimToken: string;
  state: "delivered" | "scheduled" | "dead_letter";
  nextAttemptAt: Date | null;
  statusCode: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  deadLetterReason: string | null;
  startedAt: Date;
  durationMs: number;
  retryAfterSeconds: number | null;
  responseHeaders: Record<string, string> | null;
  responseExcerpt: string | null;
  ambiguous: boolean;
  trigger: string;
  actor: string | null;
};

/**
 * The results as the JSON array writeResults reads with json_to_recordset. A
 * field that is null, or at its default (trigger 'scheduled', not ambiguous),
 * is left out: json_to_recordset reads a missing key as NULL, and parsing this
 * parameter is a measurable share of Postgres's time per delivery
 * (BENCHMARKS.md F1). `o` is the result's position: the attempt row is joined
 * to its result on it.
 */
export function resultsJson(results: AttemptResult[]): string {
  return JSON.stringify(
    results.map((r, i) => {
      const o: Record<string, unknown> = {
        o: i + 1,
        id: r.id,
        at: r.eventAt,
        state: r.state,
        claim_token: r.claimToken,
        started_at: r.startedAt,
        duration_ms: r.durationMs,
      };
      if (r.nextAttemptAt) o.next_at = r.nextAttemptAt;
      if (r.statusCode !== null) o.status_code = r.statusCode;
      if (r.errorClass !== null) o.error_class = r.errorClass;
      if (r.errorMessage !== null) o.error_message = r.errorMessage;
      if (r.deadLetterReason !== null) o.dl_reason = r.deadLetterReason;
      if (r.retryAfterSeconds !== null) o.retry_after = r.retryAfterSeconds;
      if (r.responseHeaders !== null) o.headers = r.responseHeaders;
      if (r.responseExcerpt !== null) o.excerpt = r.responseExcerpt;
      if (r.ambiguous) o.ambiguous = true;
      if (r.trigger !== "scheduled") o.trig = r.trigger;
      if (r.actor !== null) o.actor = r.actor;
      return o;
    }),
  );
}

export const hasGone = (results: AttemptResult[]) => results.some((r) => r.deadLetterReason === "gone");

/**
 * The result write as CTEs ending in `upd` (the rows it updated, with each
 * result's position `ord`): the guarded delivery updates, one attempt row
 * each, the subscriptions' failure windows and, for a 410, the subscription
 * disabled with its audit row (both in ./subscription-state.ts). Rows whose
 * lease this worker no longer holds are left alone (the reaper recorded them).
 * A batch may hold two results for one delivery (a claim reaped mid-send and
 * the row claimed again by this worker): only the result of the current claim
 * lands, and the attempt row is joined to that result by position, never by
 * id. $1 is the owner, $2 the results (resultsJson).
 */
export const writeCtes = (gone: boolean, frozen: readonly Freeze[] = []) => `
     r AS (
       SELECT o AS ord, id, state, next_at, status_code, error_class, error_message, dl_reason, started_at, duration_ms,
              CASE state WHEN 'scheduled' THEN 'retry' ELSE state END AS outcome, retry_after, headers, excerpt,
              COALESCE(ambiguous, false) AS ambiguous, COALESCE(trig, 'scheduled') AS trig, actor, claim_token, at
         FROM json_to_recordset($2::json)
           AS r(o int, id text, state text, next_at timestamptz, status_code int, error_class text, error_message text, dl_reason text,
                started_at timestamptz, duration_ms int, retry_after int, headers jsonb, excerpt text, ambiguous bool,
                trig text, actor text, claim_token timestamptz, at timestamptz)
     ),
     upd AS (
       UPDATE deliveries d
          SET state = r.state,
              next_attempt_at = COALESCE(r.next_at, d.next_attempt_at),
              lease_owner = NULL, lease_until = NULL, leased_at = NULL,
              attempt_count = d.attempt_count + 1,
              total_attempts = d.total_attempts + 1,
              last_attempt_at = r.started_at,
              last_status_code = r.status_code,
              last_error_class = r.error_class,
              last_error_message = r.error_message,
              dead_letter_reason = r.dl_reason,
              dead_lettered_at = CASE WHEN r.state = 'dead_letter' THEN now() END,
              delivered_at = CASE WHEN r.state = 'delivered' THEN now() ELSE d.delivered_at END,
              next_trigger = 'scheduled', next_actor = NULL,
              updated_at = now()
         FROM r
        WHERE d.id = r.id AND d.event_at = r.at AND d.state = 'in_flight' AND d.lease_owner = $1 AND d.leased_at = r.claim_token${outsideFrozen("d", frozen)}
       RETURNING d.id, d.subscription_id, d.total_attempts AS attempt_number, r.dl_reason, r.ord
     ),
     ins AS (
       INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, actor, started_at, duration_ms, outcome,
                             status_code, error_class, error_message, retry_after_seconds, response_headers, response_excerpt, worker_id, ambiguous)
       SELECT u.id, u.subscription_id, u.attempt_number, r.trig, r.actor, r.started_at, r.duration_ms, r.outcome,
              r.status_code, r.error_class, r.error_message, r.retry_after, r.headers, r.excerpt, $1, r.ambiguous
         FROM upd u JOIN r ON r.ord = u.ord
       RETURNING 1
     )${failureWindowCtes(gone)}${gone ? GONE_CTES : ""}`;

/**
 * Writes a batch of attempt results (writeCtes) in one statement, so one
 * transaction. Returns the results that were applied.
 */
export async function writeResults(db: pg.Pool | pg.PoolClient, owner: string, results: AttemptResult[], frozen: readonly Freeze[] = []): Promise<AttemptResult[]> {
  if (results.length === 0) return [];
  const { rows } = await db.query<{ ord: string }>({
    text: `WITH ${writeCtes(hasGone(results), frozen)}
     SELECT ord FROM upd`,
    // One JSON parameter (a native stringify) rather than seventeen arrays escaped element by element.
    values: [owner, resultsJson(results)],
  });
  const applied = rows.map((r) => results[Number(r.ord) - 1]);
  await holdEndpoints(db, applied);
  return applied;
}

/** A result that asks the endpoint be left alone: a 429 or 503 with Retry-After. */
const asksToWait = (r: AttemptResult) => (r.statusCode === 429 || r.statusCode === 503) && (r.retryAfterSeconds ?? 0) > 0;

/**
 * Holds each endpoint whose answer in `results` asked to be left alone (asksToWait) until its Retry-After, for every
 * worker: the claim's window leaves a subscription out while `held_until` is ahead (./claim.ts). A hold already
 * further ahead stays. Its own statement, run only when a result asks, in the caller's transaction when it has one:
 * the result write's statement updates the same subscriptions (the failure window), and one statement must not
 * update a row twice.
 */
export async function holdEndpoints(db: pg.Pool | pg.PoolClient, results: readonly AttemptResult[]): Promise<void> {
  const asking = results.filter(asksToWait);
  if (asking.length === 0) return;
  await db.query(
    `UPDATE subscriptions s SET held_until = h.until
       FROM (SELECT d.subscription_id, now() + make_interval(secs => LEAST(max(x.secs), ${MAX_ENDPOINT_HOLD_SECONDS})) AS until
               FROM unnest($1::text[], $2::timestamptz[], $3::int[]) AS x(id, at, secs)
               JOIN deliveries d ON d.id = x.id AND d.event_at = x.at
              GROUP BY d.subscription_id) h
      WHERE s.id = h.subscription_id AND (s.held_until IS NULL OR s.held_until < h.until)`,
    [asking.map((r) => r.id), asking.map((r) => r.eventAt), asking.map((r) => r.retryAfterSeconds)],
  );
}
