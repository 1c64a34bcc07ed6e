// Returning leased rows when their request may have been sent but no result
// was written: the reaper (expired leases) and a worker's shutdown. The
// attempt is recorded as ambiguous (docs/DESIGN.md invariants 4 and 8).
//
// A reaped lease counts against the retry budget like any failed attempt and
// is retried after the policy's backoff, not at once: a row that kills every
// worker that sends it (a payload that crashes the process, a receiver that
// hangs the socket past the lease) would otherwise be claimed, crash a worker,
// be reaped and be claimed again forever. Past the budget it is dead-lettered
// as `abandoned`. A worker shutting down returns its own rows due at once: the
// row did not cause the shutdown.
import "server-only";
import type pg from "pg";
import { nextAttempt } from "../backoff";
import { DEAD_LETTER_REASONS } from "../classify";
import { readRetryPolicy } from "../retry-policy";

type Reaped = { id: string; subscriptionId: string; owner: string | null };

/** The guarded write, shared by both paths. `x` supplies id, lease_owner, leased_at, next_trigger, next_actor, next_at (null: due now) and dead (bool). */
const write = (x: string) => `WITH x AS (${x}),
     upd AS (
       UPDATE deliveries d
          SET state = CASE WHEN x.dead THEN 'dead_letter' ELSE 'scheduled' END,
              next_attempt_at = CASE WHEN x.dead THEN d.next_attempt_at ELSE COALESCE(x.next_at, now()) END,
              dead_letter_reason = CASE WHEN x.dead THEN '${DEAD_LETTER_REASONS.abandoned}' END,
              dead_lettered_at = CASE WHEN x.dead THEN now() END,
              lease_owner = NULL, lease_until = NULL, leased_at = NULL,
              attempt_count = d.attempt_count + 1, total_attempts = d.total_attempts + 1,
              last_attempt_at = COALESCE(x.leased_at, now()), last_status_code = NULL,
              last_error_class = $2::text, last_error_message = $3::text || ' (worker ' || COALESCE(x.lease_owner, '?') || ')',
              next_trigger = 'scheduled', next_actor = NULL, updated_at = now()
         FROM x WHERE d.id = x.id
       RETURNING d.id, d.subscription_id, d.total_attempts, x.lease_owner, x.leased_at, x.next_trigger, x.next_actor
     ),
     ins AS (
       INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, actor, started_at, duration_ms, outcome,
                             error_class, error_message, worker_id, ambiguous)
       SELECT id, subscription_id, total_attempts, next_trigger, next_actor, COALESCE(leased_at, now()),
              (extract(epoch FROM now() - COALESCE(leased_at, now())) * 1000)::int, 'abandoned',
              $2::text, $3::text || ' (worker ' || COALESCE(lease_owner, '?') || ')', lease_owner, true
         FROM upd
       RETURNING 1
     )
     SELECT id, subscription_id AS "subscriptionId", lease_owner AS owner FROM upd`;

/**
 * Returns leased rows, recording the abandoned attempt (outcome 'abandoned',
 * ambiguous: the request may have been on the wire). With `owner` and `ids`:
 * this worker's own rows at shutdown, due at once; without: every expired
 * lease (the reaper), retried after backoff or dead-lettered as `abandoned`
 * past the budget (reapExpired). SKIP LOCKED lets several reapers run at once.
 */
export async function abandonLeases(
  db: pg.Pool | pg.PoolClient,
  opts: { errorClass: "lease_expired" | "shutdown"; owner?: string; ids?: string[]; claimTokens?: string[]; limit?: number; now?: Date; random?: () => number },
): Promise<Reaped[]> {
  if (opts.owner === undefined) return reapExpired(db, opts.limit ?? 1000, opts.now, opts.random);
  const { rows } = await db.query<Reaped>(
    write(`SELECT id, lease_owner, leased_at, lease_until, next_trigger, next_actor, NULL::timestamptz AS next_at, false AS dead FROM deliveries
        WHERE state = 'in_flight' AND lease_owner = $4 AND (id, leased_at) IN (SELECT * FROM unnest($5::text[], $6::timestamptz[]))
        ORDER BY lease_until
        LIMIT $1
        FOR UPDATE SKIP LOCKED`),
    [opts.limit ?? 10_000, opts.errorClass, shutdownMessage, opts.owner, opts.ids ?? [], opts.claimTokens ?? []],
  );
  return rows;
}

type Expired = { id: string; leased_at: string; attempt_count: number; run_started_at: Date; retry_policy: string };

/**
 * The reaper: reads the expired leases with their run state and policy, decides
 * each one's next attempt with the same function as a failed send
 * (lib/ledger/backoff.ts nextAttempt, so the ladder, jitter, maxAttempts and
 * maxAgeSeconds have one meaning), then writes them in one statement guarded
 * on the lease it read (state, leased_at, still expired) with SKIP LOCKED: a
 * row whose result landed, or that another reaper took, in between is left
 * alone.
 */
async function reapExpired(db: pg.Pool | pg.PoolClient, limit: number, now = new Date(), random?: () => number): Promise<Reaped[]> {
  const { rows: expired } = await db.query<Expired>(
    `SELECT d.id, d.leased_at::text AS leased_at, d.attempt_count, d.run_started_at, s.retry_policy::text AS retry_policy
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
      WHERE d.state = 'in_flight' AND d.lease_until < now()
      ORDER BY d.lease_until
      LIMIT $1`,
    [limit],
  );
  if (expired.length === 0) return [];
  const ids: string[] = [];
  // The lease as text: a JavaScript Date would drop its microseconds and no longer match it.
  const tokens: string[] = [];
  const nextAt: (Date | null)[] = [];
  const dead: boolean[] = [];
  for (const r of expired) {
    const next = nextAttempt({ attemptNumber: r.attempt_count + 1, runStartedAt: r.run_started_at ?? now, now, policy: readRetryPolicy(r.retry_policy), random });
    ids.push(r.id);
    tokens.push(r.leased_at);
    nextAt.push(next.kind === "retry" ? next.at : null);
    dead.push(next.kind === "exhausted");
  }
  const { rows } = await db.query<Reaped>(
    write(`SELECT d.id, d.lease_owner, d.leased_at, d.lease_until, d.next_trigger, d.next_actor, r.next_at, r.dead
        FROM deliveries d JOIN unnest($4::text[], $5::timestamptz[], $6::timestamptz[], $7::bool[]) AS r(id, leased_at, next_at, dead)
          ON d.id = r.id AND d.leased_at = r.leased_at
       WHERE d.state = 'in_flight' AND d.lease_until < now()
       ORDER BY d.lease_until
       LIMIT $1
       FOR UPDATE OF d SKIP LOCKED`),
    [limit, "lease_expired", reapMessage, ids, tokens, nextAt, dead],
  );
  return rows;
}

const reapMessage = "The lease expired before a result was written: the worker crashed or stalled; the request may have been sent";
const shutdownMessage = "The worker shut down while the request was in flight; the request may have been sent";

/**
 * Ends the leases of a worker process known to be gone (`hookledger start` saw it exit), so its rows are reaped
 * now rather than when their leases run out (the subscription's timeout and HOOKLEDGER_LEASE_SLACK_MS, 45 s by
 * default): until then they count against their subscriptions' maxConcurrency, and a subscription whose slots
 * the dead worker held sent nothing. The worker is named by the heartbeat it wrote: this host, its pid, and a
 * start no earlier than the process was spawned, so a later process given the same pid is not taken for it.
 * Its heartbeat is marked stopped. Then reaps, as the reaper does (ambiguous attempts, the policy's backoff).
 */
export async function reapDeadWorker(db: pg.Pool, w: { hostname: string; pid: number; spawnedAt: Date }): Promise<{ workers: string[]; reaped: Reaped[] }> {
  const { rows } = await db.query<{ workers: string[] | null }>(
    `WITH dead AS (
       UPDATE worker_heartbeats SET stopped_at = now()
        WHERE hostname = $1 AND pid = $2 AND started_at >= $3 AND stopped_at IS NULL
       RETURNING worker_id
     ), ended AS (
       UPDATE deliveries d SET lease_until = now() - interval '1 millisecond'
         FROM dead WHERE d.state = 'in_flight' AND d.lease_owner = dead.worker_id
       RETURNING d.id
     )
     SELECT (SELECT array_agg(worker_id) FROM dead) AS workers, (SELECT count(*) FROM ended) AS ended`,
    [w.hostname, w.pid, w.spawnedAt],
  );
  const workers = rows[0].workers ?? [];
  if (workers.length === 0) return { workers, reaped: [] };
  const reaped: Reaped[] = [];
  for (;;) {
    const batch = await reapExpired(db, 1000);
    reaped.push(...batch);
    if (batch.length < 1000) break;
  }
  return { workers, reaped: reaped.filter((r) => r.owner !== null && workers.includes(r.owner)) };
}
