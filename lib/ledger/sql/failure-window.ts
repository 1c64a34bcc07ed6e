// The failure window, kept by the result write (./write-results.ts) in the
// same statement as the attempts: per subscription, the current run of
// consecutive failed attempts (failing_since, failing_attempts), and the pause
// for failing when the subscription's policy holds (every attempt failed for
// failure_window_seconds, and at least failure_min_attempts of them). The
// pause lands in the transaction of the attempt that tripped it, with its
// audit row; hookledger.subscription.paused is published by the trigger of
// migration 0016 in the same transaction. Its deliveries are then held the way
// a manual pause holds them: the claim takes only active subscriptions'
// rows (docs/DESIGN.md invariant 7).
import "server-only";

const NOT_GONE = `
          AND NOT EXISTS (SELECT 1 FROM upd g WHERE g.subscription_id = s.id AND g.dl_reason = 'gone')`;

/**
 * CTEs over the result write's `upd` (the rows it updated) and `r` (their
 * results), ending in `fw_paused` (the subscriptions this statement paused).
 *
 * Cheap on the hot path: a subscription's row is written only when its run
 * changes, that is on a failure while its policy is on, or on a success that
 * ends a run; the successes of a healthy subscription (no run) match no row.
 * Within a batch, the failures that count are those after the batch's last
 * success for the subscription (a success ends the run before it). Attempts
 * are counted whatever they failed with: a permanent 4xx costs an attempt as
 * much as a 503. With a 410 in the batch (`gone`), the subscriptions it
 * disables are left to that update: one statement cannot update a row twice.
 */
export const failureWindowCtes = (gone: boolean) => `,
     fw_in AS (
       SELECT sid, bool_or(ok) AS any_ok,
              count(*) FILTER (WHERE NOT ok AND at > last_ok)::int AS n_fail,
              min(at) FILTER (WHERE NOT ok AND at > last_ok) AS first_fail
         FROM (SELECT u.subscription_id AS sid, r.state = 'delivered' AS ok, r.started_at AS at,
                      COALESCE(max(r.started_at) FILTER (WHERE r.state = 'delivered') OVER (PARTITION BY u.subscription_id), '-infinity') AS last_ok
                 FROM upd u JOIN r ON r.ord = u.ord) x
        GROUP BY sid
     ),
     fw AS (
       UPDATE subscriptions s
          SET (failing_attempts, failing_since, state, paused_reason, paused_at, state_reason, next_probe_at, probe_count, updated_at) = (
                SELECT v.attempts, v.since,
                       CASE WHEN v.trip THEN 'paused' ELSE s.state END,
                       CASE WHEN v.trip THEN 'failing' ELSE s.paused_reason END,
                       CASE WHEN v.trip THEN now() ELSE s.paused_at END,
                       CASE WHEN v.trip
                            THEN 'every attempt since ' || to_char(v.since AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC failed (' || v.attempts
                                 || ' attempts); the endpoint is probed until it answers 2xx'
                            ELSE s.state_reason END,
                       CASE WHEN v.trip THEN now() + make_interval(secs => s.probe_interval_seconds) ELSE s.next_probe_at END,
                       CASE WHEN v.trip THEN 0 ELSE s.probe_count END,
                       CASE WHEN v.trip THEN now() ELSE s.updated_at END
                  FROM (SELECT a.attempts, a.since,
                               s.state = 'active' AND s.failure_window_seconds IS NOT NULL AND a.attempts >= s.failure_min_attempts
                                 AND a.since <= now() - make_interval(secs => s.failure_window_seconds) AS trip
                          FROM (SELECT CASE WHEN fw_in.any_ok THEN fw_in.n_fail ELSE s.failing_attempts + fw_in.n_fail END AS attempts,
                                       CASE WHEN fw_in.any_ok THEN fw_in.first_fail ELSE COALESCE(s.failing_since, fw_in.first_fail) END AS since) a) v)
         FROM fw_in
        WHERE s.id = fw_in.sid
          AND CASE WHEN fw_in.any_ok THEN s.failing_attempts <> fw_in.n_fail OR s.failing_since IS DISTINCT FROM fw_in.first_fail
                   ELSE fw_in.n_fail > 0 AND s.failure_window_seconds IS NOT NULL END${gone ? NOT_GONE : ""}
       RETURNING s.id, s.state, s.paused_reason, s.paused_at, s.failing_since, s.failing_attempts
     ),
     fw_paused AS (
       SELECT id, failing_since, failing_attempts FROM fw WHERE state = 'paused' AND paused_reason = 'failing' AND paused_at = now()
     ),
     fw_aud AS (
       INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
       SELECT 'system', 'subscription.pause', 'subscription', p.id,
              'Every attempt failed since ' || to_char(p.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' (' || p.failing_attempts
                || ' attempts): paused for failing; its deliveries are held and the endpoint is probed.',
              jsonb_build_object('from', 'active', 'to', 'paused')
         FROM fw_paused p
       RETURNING 1
     )`;
