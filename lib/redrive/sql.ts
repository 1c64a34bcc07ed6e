// The hand-written SQL of redrive. Every transition is guarded in SQL
// (invariant 3): a row moves back to pending only if it is still
// dead-lettered and its subscription is active, so an already delivered row is
// never touched and two concurrent redrives of one row move it once (the
// second blocks on the row lock, re-checks `state = 'dead_letter'`, and finds
// nothing to do). Identity (delivery_key, event, bytes) is never written.
import type { TRedriveFilter } from "./schema";

/** The channel the worker LISTENs on for newly due deliveries. */
export const DELIVERIES_CHANNEL = "hookledger_deliveries";
/** Wakes pacers when a batch is created. */
export const REDRIVES_CHANNEL = "hookledger_redrives";

/**
 * The redrive itself: state back to pending, a fresh attempt budget
 * (attempt_count 0, a new run), due now, and the next attempt recorded as
 * trigger `redrive` by `actor` (the worker copies next_trigger/next_actor into
 * the attempt). Parameters: $1 text[] of delivery ids, $2 the actor.
 */
export const REDRIVE_SQL = `
  UPDATE deliveries d
     SET state = 'pending', attempt_count = 0, run_started_at = now(), next_attempt_at = now(),
         next_trigger = 'redrive', next_actor = $2,
         dead_letter_reason = NULL, dead_lettered_at = NULL,
         lease_owner = NULL, lease_until = NULL, updated_at = now()
   WHERE d.id = ANY($1::text[])
     AND d.state = 'dead_letter'
     AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active')
  RETURNING d.id`;

/** "Retry now" for a scheduled delivery: due at once, recorded as trigger `manual`. $1 id, $2 actor. */
export const RETRY_NOW_SQL = `
  UPDATE deliveries d
     SET next_attempt_at = now(), next_trigger = 'manual', next_actor = $2, updated_at = now()
   WHERE d.id = $1
     AND d.state = 'scheduled'
     AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active')
  RETURNING d.id`;

/**
 * "Latest state wins": true when a newer event of the same type and the same
 * subject (every subject key, e.g. tenant + studentId + assignmentId) has
 * already been delivered to the same subscription, so redriving this stale one
 * would overwrite newer data at the receiver. Expects aliases d (deliveries)
 * and e (its event). The GIN index on subject_values finds the candidates.
 */
export const SUPERSEDED_SQL = `EXISTS (
    SELECT 1 FROM events e2 JOIN deliveries d2 ON d2.event_id = e2.id
     WHERE e.subject <> '{}'::jsonb
       AND e2.subject_values @> e.subject_values AND e2.subject = e.subject
       AND e2.type = e.type AND e2.occurred_at > e.occurred_at
       AND d2.subscription_id = d.subscription_id AND d2.state = 'delivered')`;

/**
 * The WHERE clause of a bulk redrive's filter over deliveries d (dead-lettered
 * rows only, so the partial DLQ indexes serve it). Appends its parameters.
 */
export function filterWhere(f: TRedriveFilter, params: unknown[]): string {
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const c = ["d.state = 'dead_letter'"];
  if (f.subscriptionId) c.push(`d.subscription_id = ${p(f.subscriptionId)}`);
  if (f.deadLetterReason) c.push(`d.dead_letter_reason = ${p(f.deadLetterReason)}`);
  if (f.errorClass) c.push(`d.last_error_class = ${p(f.errorClass)}`);
  if (f.statusCode !== undefined) c.push(`d.last_status_code = ${p(f.statusCode)}::int`);
  if (f.deadLetteredFrom) c.push(`d.dead_lettered_at >= ${p(f.deadLetteredFrom)}::timestamptz`);
  if (f.deadLetteredTo) c.push(`d.dead_lettered_at < ${p(f.deadLetteredTo)}::timestamptz`);
  return c.join(" AND ");
}

/**
 * The next `$3` items of batch `$1` after position `$2`, with what the pacer
 * needs to decide each: the subscription's state and, when `$4`
 * (latest-state-wins), whether a newer event has superseded it.
 */
export const NEXT_ITEMS_SQL = `
  SELECT n.seq, n.delivery_id, s.state AS sub_state,
         ($4::boolean AND ${SUPERSEDED_SQL}) AS superseded
    FROM (SELECT i.seq, i.delivery_id FROM redrive_batch_items i
           WHERE i.batch_id = $1 AND i.seq > $2
           ORDER BY i.seq LIMIT $3) n
    JOIN deliveries d ON d.id = n.delivery_id
    JOIN events e ON e.id = d.event_id
    JOIN subscriptions s ON s.id = d.subscription_id
   ORDER BY n.seq`;

/** Records each handled item's outcome in one statement. $1 batch, $2 int[] seqs, $3 text[] outcomes. */
export const RECORD_ITEMS_SQL = `
  UPDATE redrive_batch_items i
     SET outcome = x.outcome, processed_at = now()
    FROM unnest($2::int[], $3::text[]) AS x(seq, outcome)
   WHERE i.batch_id = $1 AND i.seq = x.seq`;
