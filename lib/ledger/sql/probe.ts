// Probing a subscription paused for failing (./subscription-state.ts): a
// worker claims a due probe, sends a signed hookledger.ping (not one of the
// held deliveries), and records the answer here. The first 2xx resumes the
// subscription (resumeAfterProbe, with the other state changes).
import "server-only";
import type pg from "pg";
import { resumeAfterProbe } from "./subscription-state";

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
 * dies mid-probe leaves the probe due again when the lease runs out. FOR NO
 * KEY UPDATE, not FOR UPDATE: SKIP LOCKED passes over a row whose lock
 * conflicts, and FOR UPDATE conflicts with the KEY SHARE every producer
 * publishing to the subscription holds (held deliveries are still enqueued),
 * so under steady traffic a failing endpoint was never probed and never
 * resumed (Row locks, ./subscription-state.ts).
 */
export async function claimDueProbes(db: pg.Pool | pg.PoolClient, opts: { limit: number; leaseSeconds: number }): Promise<DueProbe[]> {
  const { rows } = await db.query<DueProbe>(
    `UPDATE subscriptions s SET next_probe_at = now() + make_interval(secs => $2)
       FROM (SELECT id FROM subscriptions
              WHERE next_probe_at <= now() AND state = 'paused' AND paused_reason = 'failing' AND archived_at IS NULL
              ORDER BY next_probe_at LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED) due
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
  return resumeAfterProbe(db, a);
}
