// Probing a subscription paused for failing (./failure-window.ts): a worker
// claims a due probe, sends a signed hookledger.ping (not one of the held
// deliveries), and records the answer here. The first 2xx resumes the
// subscription in one statement: the subscription active again with its
// failure run cleared, its held deliveries due at once in the order they were
// created, the audit row by the system, and hookledger.subscription.recovered.
import "server-only";
import type pg from "pg";
import { DELIVERIES_CHANNEL } from "../notify";

export type DueProbe = {
  id: string;
  url: string;
  /** The subscription's retry_policy as JSON text (its timeoutMs bounds the probe too). */
  retryPolicy: string;
  /** Sealed endpoint headers and client certificate, opened by the caller. */
  endpointHeaders: string | null;
  endpointTls: string | null;
  probeCount: number;
};

/**
 * Claims up to `limit` due probes: subscriptions paused for failing whose
 * next_probe_at has come. Moving next_probe_at forward by `leaseSeconds` is
 * the claim: one worker probes a subscription at a time (SKIP LOCKED against
 * a concurrent claim, the moved time against a later one), and a worker that
 * dies mid-probe leaves the probe due again when the lease runs out.
 */
export async function claimDueProbes(db: pg.Pool | pg.PoolClient, opts: { limit: number; leaseSeconds: number }): Promise<DueProbe[]> {
  const { rows } = await db.query<DueProbe>(
    `UPDATE subscriptions s SET next_probe_at = now() + make_interval(secs => $2)
       FROM (SELECT id FROM subscriptions
              WHERE next_probe_at <= now() AND state = 'paused' AND paused_reason = 'failing' AND archived_at IS NULL
              ORDER BY next_probe_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
      WHERE s.id = due.id
     RETURNING s.id, s.url, s.retry_policy::text AS "retryPolicy", s.endpoint_headers AS "endpointHeaders", s.endpoint_tls AS "endpointTls",
               s.probe_count AS "probeCount"`,
    [opts.limit, opts.leaseSeconds],
  );
  return rows;
}

export type ProbeAnswer = {
  subscriptionId: string;
  /** The HTTP status, null when the endpoint did not answer. */
  status: number | null;
  /** Why there was no 2xx: the transport's error class and message, or `HTTP <status>`. */
  error: string | null;
  latencyMs: number;
  at: Date;
};

/**
 * The probes at the policy's interval for the first PROBES_AT_INTERVAL
 * probes, then doubling, to hourly (or the interval itself, if longer): an
 * endpoint down for a day is asked once an hour, not 96 times.
 */
const PROBES_AT_INTERVAL = 4;
const NEXT_PROBE = `now() + make_interval(secs => LEAST(GREATEST(s.probe_interval_seconds, 3600),
                     s.probe_interval_seconds * power(2, LEAST(20, GREATEST(0, s.probe_count + 1 - ${PROBES_AT_INTERVAL})))))`;

/**
 * Records a probe's answer on the subscription, if it is still paused for
 * failing (a manual resume or pause meanwhile wins). A 2xx resumes it (see the
 * file's head) and returns "resumed"; another answer schedules the next probe
 * and returns "failing"; "gone" when the subscription is no longer paused for
 * failing.
 */
export async function recordProbe(db: pg.Pool | pg.PoolClient, a: ProbeAnswer): Promise<"resumed" | "failing" | "gone"> {
  const ok = a.status !== null && a.status >= 200 && a.status < 300;
  if (!ok) {
    const r = await db.query(
      `UPDATE subscriptions s
          SET probe_count = s.probe_count + 1, last_probe_at = $2, last_probe_status = $3, last_probe_error = $4, last_probe_latency_ms = $5,
              next_probe_at = ${NEXT_PROBE}
        WHERE s.id = $1 AND s.state = 'paused' AND s.paused_reason = 'failing'`,
      [a.subscriptionId, a.at, a.status, a.error, a.latencyMs],
    );
    return r.rowCount ? "failing" : "gone";
  }
  const { rows } = await db.query<{ held: string }>(
    `WITH was AS (
       SELECT id, name, tenant, paused_at, failing_since FROM subscriptions
        WHERE id = $1 AND state = 'paused' AND paused_reason = 'failing' FOR UPDATE
     ),
     up AS (
       UPDATE subscriptions s
          SET state = 'active', state_reason = NULL, paused_reason = NULL, paused_at = NULL, failing_since = NULL, failing_attempts = 0,
              next_probe_at = NULL, probe_count = s.probe_count + 1, last_probe_at = $2::timestamptz, last_probe_status = $3::int, last_probe_error = NULL,
              last_probe_latency_ms = $4::int, updated_at = now()
         FROM was WHERE s.id = was.id
       RETURNING s.id
     ),
     -- The held deliveries: due now, oldest first (the claim takes them by next_attempt_at), with
     -- the time spent paused left out of their run's age (maxAgeSeconds), so the pause did not
     -- use up what the policy allows them.
     held AS (
       UPDATE deliveries d
          SET next_attempt_at = d.created_at,
              run_started_at = d.run_started_at + GREATEST(interval '0', now() - GREATEST(was.paused_at, d.run_started_at)),
              updated_at = now()
         FROM was JOIN up ON up.id = was.id
        WHERE d.subscription_id = was.id AND d.state IN ('pending', 'scheduled')
       RETURNING 1
     ),
     aud AS (
       INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
       SELECT 'system', 'subscription.resume', 'subscription', was.id,
              'A probe was answered ' || $3::int || ' after ' || justify_interval(date_trunc('second', now() - was.paused_at))::text || ' paused for failing; held deliveries drain at the subscription''s own rate.',
              jsonb_build_object('from', 'paused', 'to', 'active')
         FROM was JOIN up ON up.id = was.id
       RETURNING 1
     ),
     ev AS (
       SELECT hl_publish_ops_event('hookledger.subscription.recovered', was.tenant, jsonb_build_object('subscriptionId', was.id),
                jsonb_build_object('subscriptionId', was.id, 'subscriptionName', was.name, 'failingSince', was.failing_since,
                                   'recoveredAt', now(), 'deliveryId', NULL,
                                   'probe', jsonb_build_object('status', $3::int, 'latencyMs', $4::int, 'at', $2::timestamptz))) AS id
         FROM was JOIN up ON up.id = was.id
     )
     SELECT (SELECT count(*) FROM held) AS held, (SELECT count(*) FROM aud) AS aud, (SELECT count(*) FROM ev) AS ev,
            pg_notify('${DELIVERIES_CHANNEL}', $1)
       FROM up`,
    [a.subscriptionId, a.at, a.status, a.latencyMs],
  );
  return rows.length > 0 ? "resumed" : "gone";
}
