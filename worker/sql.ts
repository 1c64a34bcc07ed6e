// The hot-path SQL of the delivery worker, raw `pg` (PLATFORM.md: batched raw
// statements are what reach thousands of deliveries a second). Every
// transition is guarded in SQL by state and lease owner (DESIGN.md #3).
import type pg from "pg";

export type ClaimedRow = {
  id: string;
  deliveryKey: string;
  subscriptionId: string;
  eventId: string;
  prevState: "pending" | "scheduled";
  /**
   * The claim token: leased_at of this claim as Postgres text (microseconds
   * kept). Result writes match on it as well as on the owner, so a result can
   * only land on the claim it belongs to, never on a later claim of the same
   * row by the same worker after a reap.
   */
  claimToken: string;
  attemptCount: number;
  totalAttempts: number;
  /** Epoch milliseconds (a number, not a Date: parsing timestamps is measurable per delivery). */
  runStartedAt: number;
  /** Epoch milliseconds. */
  dueAt: number;
  trigger: string;
  actor: string | null;
  /** The subscription's free slots when the claim ran: its first `slotsFree` rows in the batch may go on the wire now, the rest are prefetched (held). */
  slotsFree: number;
  url: string;
  /** The subscription's retry_policy as JSON text (rows of one subscription share it; worker/policy.ts caches by it). */
  retryPolicy: string;
  rateLimitPerSecond: number | null;
  payload: Buffer;
};

export type ClaimOptions = {
  owner: string;
  limit: number;
  perSubscription: number;
  leaseSlackSeconds: number;
  excludeSubscriptions: string[];
  /**
   * This worker's in-flight rows whose answer is in and whose result is
   * waiting to be written (or is written by the same statement, whose snapshot
   * still shows them in flight): they are off the wire, so they do not count
   * against `max_concurrency` (counting them held a drain to the pace of the
   * result writes: BENCHMARKS.md F1).
   */
  answered?: string[];
  /**
   * This worker's claimed rows held back, waiting for one of its own requests
   * to the same subscription to finish (prefetched). They are off the wire,
   * and each backs one of this worker's requests on it. Without `held`, the
   * claim prefetches nothing.
   */
  held?: string[];
};

/**
 * The claim as CTEs ending in `claimed`: up to `limit` due deliveries of
 * active subscriptions, leased to the owner. Subscriptions are visited in
 * random order, each contributing at most `perSubscription` rows, so one
 * district cannot fill the batch. A subscription's `room` is its
 * `max_concurrency` less its in-flight rows on every worker (this worker's
 * answered ones left out): the rows that may go on the wire now (`slotsFree`).
 * With `held` given, the claim also prefetches: up to one more row for each
 * request this worker has on the wire to the subscription and has not yet
 * backed with a held row. The worker holds those and sends one each time one
 * of its own requests to that subscription finishes, so a freed slot is
 * refilled without waiting for the next claim, and the requests on the wire
 * never exceed `max_concurrency` (held rows count as in flight for every
 * worker's room). The lease is the subscription's timeout plus the slack.
 * `p` names the statement's parameters.
 */
const claimCtes = (p: { owner: string; limit: string; perSub: string; exclude: string; slack: string; answered: string; held: string }) => `
     subs AS MATERIALIZED (
       SELECT s.id, s.url, s.retry_policy, s.rate_limit_per_second,
              s.max_concurrency - f.busy AS room,
              GREATEST(0, s.max_concurrency - f.busy) + CASE WHEN ${p.held}::text[] IS NULL THEN 0 ELSE GREATEST(0, f.mine_wire - f.mine_held) END AS take
       FROM subscriptions s
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE NOT (f.id = ANY(${p.answered}::text[]))) AS busy,
                count(*) FILTER (WHERE f.lease_owner = ${p.owner} AND NOT (f.id = ANY(${p.answered}::text[])) AND NOT (f.id = ANY(${p.held}::text[]))) AS mine_wire,
                count(*) FILTER (WHERE f.id = ANY(${p.held}::text[])) AS mine_held
           FROM deliveries f WHERE f.subscription_id = s.id AND f.state = 'in_flight'
       ) f
       WHERE s.state = 'active' AND NOT (s.id = ANY(${p.exclude}::text[]))
       ORDER BY random()
     ),
     cand AS (
       SELECT c.ctid, c.state AS prev_state, c.event_id, subs.id AS sub_id
       FROM subs CROSS JOIN LATERAL (
         SELECT d.ctid, d.state, d.event_id FROM deliveries d
         WHERE d.subscription_id = subs.id AND d.state IN ('pending', 'scheduled') AND d.next_attempt_at <= now()
         ORDER BY d.next_attempt_at
         LIMIT LEAST(subs.take, ${p.perSub}::int, COALESCE(subs.rate_limit_per_second, ${p.perSub}::int))
         FOR UPDATE SKIP LOCKED
       ) c
       WHERE subs.take > 0
       LIMIT ${p.limit}
     ),
     claimed AS (
       UPDATE deliveries d
          SET state = 'in_flight', lease_owner = ${p.owner}, leased_at = now(),
              lease_until = now() + make_interval(secs => (CASE WHEN jsonb_typeof(s.retry_policy->'timeoutMs') = 'number'
                                                             THEN (s.retry_policy->>'timeoutMs')::numeric ELSE 15000 END) / 1000 + ${p.slack}::numeric),
              updated_at = now()
         FROM cand
         JOIN subs s ON s.id = cand.sub_id
         JOIN events e ON e.id = cand.event_id
        WHERE d.ctid = cand.ctid AND d.state IN ('pending', 'scheduled')
       RETURNING d.id, d.delivery_key AS "deliveryKey", d.subscription_id AS "subscriptionId", d.event_id AS "eventId",
                 cand.prev_state AS "prevState", d.leased_at::text AS "claimToken", d.attempt_count AS "attemptCount", d.total_attempts AS "totalAttempts",
                 (extract(epoch FROM d.run_started_at) * 1000)::float8 AS "runStartedAt", (extract(epoch FROM d.next_attempt_at) * 1000)::float8 AS "dueAt",
                 d.next_trigger AS trigger, d.next_actor AS actor, GREATEST(0, s.room)::int AS "slotsFree",
                 s.url, s.retry_policy::text AS "retryPolicy", s.rate_limit_per_second AS "rateLimitPerSecond", e.payload
     )`;

const claimParams = (o: ClaimOptions) => [o.limit, o.perSubscription, o.excludeSubscriptions, o.leaseSlackSeconds, o.answered ?? [], o.held ?? null];

/**
 * Claims due deliveries (claimCtes) in one statement. The worker runs it
 * inside writeAndClaim's claim lock; called on its own (tests, bench) it is
 * its own transaction and must not race another claim for the same
 * subscriptions.
 */
export async function claimDeliveries(db: pg.Pool | pg.PoolClient, opts: ClaimOptions): Promise<ClaimedRow[]> {
  const { rows } = await db.query({
    text: `WITH ${claimCtes({ owner: "$1", limit: "$2", perSub: "$3", exclude: "$4", slack: "$5", answered: "$6", held: "$7" })}
     SELECT * FROM claimed`,
    values: [opts.owner, ...claimParams(opts)],
  });
  return rows as ClaimedRow[];
}

export type AttemptResult = {
  id: string;
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
function resultsJson(results: AttemptResult[]): string {
  return JSON.stringify(
    results.map((r, i) => {
      const o: Record<string, unknown> = { o: i + 1, id: r.id, state: r.state, claim_token: r.claimToken, started_at: r.startedAt, duration_ms: r.durationMs };
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

/**
 * For a result batch with a 410 among it: the subscription disabled and the
 * audit row, in the same statement (so the same transaction) as the result.
 * Left out of the statement otherwise: planning and running it for every batch
 * cost the hot path for what is rare.
 */
const GONE = `,
     gone AS (
       UPDATE subscriptions s
          SET state = 'disabled', state_reason = 'The endpoint answered 410 Gone (delivery ' || g.id || ').', updated_at = now()
         FROM (SELECT DISTINCT ON (subscription_id) subscription_id, id FROM upd WHERE dl_reason = 'gone' ORDER BY subscription_id, id) g
        WHERE s.id = g.subscription_id AND s.state <> 'disabled'
       RETURNING s.id, g.id AS delivery_id
     ),
     aud AS (
       INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
       SELECT 'system', 'subscription.disable', 'subscription', gone.id, 'The endpoint answered 410 Gone.',
              jsonb_build_object('deliveryId', gone.delivery_id, 'statusCode', 410, 'to', 'disabled')
         FROM gone
       RETURNING 1
     )`;

const hasGone = (results: AttemptResult[]) => results.some((r) => r.deadLetterReason === "gone");

/**
 * The result write as CTEs ending in `upd` (the rows it updated, with each
 * result's position `ord`): the guarded delivery updates, one attempt row
 * each, and for a 410 the subscription disabled with its audit row. Rows whose
 * lease this worker no longer holds are left alone (the reaper recorded them).
 * A batch may hold two results for one delivery (a claim reaped mid-send and
 * the row claimed again by this worker): only the result of the current claim
 * lands, and the attempt row is joined to that result by position, never by
 * id. $1 is the owner, $2 the results (resultsJson).
 */
const writeCtes = (gone: boolean) => `
     r AS (
       SELECT o AS ord, id, state, next_at, status_code, error_class, error_message, dl_reason, started_at, duration_ms,
              CASE state WHEN 'scheduled' THEN 'retry' ELSE state END AS outcome, retry_after, headers, excerpt,
              COALESCE(ambiguous, false) AS ambiguous, COALESCE(trig, 'scheduled') AS trig, actor, claim_token
         FROM json_to_recordset($2::json)
           AS r(o int, id text, state text, next_at timestamptz, status_code int, error_class text, error_message text, dl_reason text,
                started_at timestamptz, duration_ms int, retry_after int, headers jsonb, excerpt text, ambiguous bool,
                trig text, actor text, claim_token timestamptz)
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
        WHERE d.id = r.id AND d.state = 'in_flight' AND d.lease_owner = $1 AND d.leased_at = r.claim_token
       RETURNING d.id, d.subscription_id, d.total_attempts AS attempt_number, r.dl_reason, r.ord
     ),
     ins AS (
       INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, actor, started_at, duration_ms, outcome,
                             status_code, error_class, error_message, retry_after_seconds, response_headers, response_excerpt, worker_id, ambiguous)
       SELECT u.id, u.subscription_id, u.attempt_number, r.trig, r.actor, r.started_at, r.duration_ms, r.outcome,
              r.status_code, r.error_class, r.error_message, r.retry_after, r.headers, r.excerpt, $1, r.ambiguous
         FROM upd u JOIN r ON r.ord = u.ord
       RETURNING 1
     )${gone ? GONE : ""}`;

/**
 * Writes a batch of attempt results (writeCtes) in one statement, so one
 * transaction. Returns the results that were applied.
 */
export async function writeResults(db: pg.Pool | pg.PoolClient, owner: string, results: AttemptResult[]): Promise<AttemptResult[]> {
  if (results.length === 0) return [];
  const { rows } = await db.query<{ ord: string }>({
    text: `WITH ${writeCtes(hasGone(results))}
     SELECT ord FROM upd`,
    // One JSON parameter (a native stringify) rather than seventeen arrays escaped element by element.
    values: [owner, resultsJson(results)],
  });
  return rows.map((r) => results[Number(r.ord) - 1]);
}

/**
 * One cycle of the hot path in one statement, under the claim lock
 * (inClaimLock), so one transaction and one commit: the results written
 * (writeCtes) and the next batch claimed (claimCtes). A commit is a WAL flush;
 * paying one per cycle rather than one per claim and one per write is what
 * the worker's concurrency slots wait on (BENCHMARKS.md F1). Both halves see
 * the statement's one snapshot: the rows being written are still in flight in
 * it, so they must be among `answered`, and the claim cannot see a
 * subscription the write disables for a 410, so a batch holding a 410 claims
 * nothing (`claim` null does the same). The claimed rows' leases are committed
 * before any of them is sent.
 */
export async function writeAndClaim(
  db: pg.Pool,
  owner: string,
  results: AttemptResult[],
  claim: Omit<ClaimOptions, "owner"> | null,
): Promise<{ applied: AttemptResult[]; claimed: ClaimedRow[] }> {
  if (!claim || hasGone(results)) return { applied: await writeResults(db, owner, results), claimed: [] };
  return inClaimLock(db, async (c) => {
    if (results.length === 0) return { applied: [], claimed: await claimDeliveries(c, { owner, ...claim }) };
    const { rows } = await c.query<ClaimedRow & { ord: number | null }>({
      text: `WITH ${writeCtes(false)},${claimCtes({ owner: "$1", limit: "$3", perSub: "$4", exclude: "$5", slack: "$6", answered: "$7", held: "$8" })}
       SELECT c.*, NULL::int AS ord FROM claimed c
       UNION ALL
       SELECT c.*, u.ord FROM upd u LEFT JOIN claimed c ON false`,
      values: [owner, resultsJson(results), ...claimParams({ owner, ...claim })],
    });
    const applied: AttemptResult[] = [];
    const claimed: ClaimedRow[] = [];
    for (const row of rows) {
      if (row.ord === null) claimed.push(row);
      else applied.push(results[row.ord - 1]);
    }
    return { applied, claimed };
  });
}

const ignore = () => {};

/** The advisory lock claims take (an arbitrary constant: "hlclaim" in ASCII). */
const CLAIM_LOCK = 0x686c636c61696d;

/**
 * Runs `fn` in a transaction that first takes the claim lock, so that claims
 * never overlap, across all workers. A claim counts each subscription's
 * in-flight rows in its statement's snapshot: two claims side by side would
 * each see the other's leases as free slots and together exceed
 * `max_concurrency` (test/worker-processes.test.ts saw 12 requests on the wire
 * for a cap of 4 with four workers). The lock is taken in its own statement,
 * so the claim's snapshot, taken after it, sees every earlier claim committed.
 * A worker waits at most for the other workers' cycles; one worker alone
 * never waits.
 */
async function inClaimLock<T>(db: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await db.connect();
  // A checked-out client has no pool listener: a connection lost meanwhile (Postgres restarted)
  // must reject the query under way, not crash the process with an unhandled 'error' event.
  c.on("error", ignore);
  try {
    await c.query(`BEGIN; SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`);
    const out = await fn(c);
    await c.query("COMMIT");
    c.off("error", ignore);
    c.release();
    return out;
  } catch (err) {
    // The connection may be gone or mid-transaction: drop it rather than return it to the pool
    // (the no-op listener stays: the dropped client may still report its socket's end).
    c.release(err as Error);
    throw err;
  }
}

/**
 * Returns leased rows to due, recording the abandoned attempt (outcome
 * 'abandoned', ambiguous: the request may have been on the wire). With `owner`
 * and `ids`: this worker's own rows at shutdown; without: every expired lease
 * (the reaper). SKIP LOCKED lets several reapers run at once.
 */
export async function abandonLeases(
  db: pg.Pool | pg.PoolClient,
  opts: { errorClass: "lease_expired" | "shutdown"; owner?: string; ids?: string[]; claimTokens?: string[]; limit?: number },
): Promise<{ id: string; subscriptionId: string; owner: string | null }[]> {
  const own = opts.owner !== undefined;
  const { rows } = await db.query(
    `WITH x AS (
       SELECT id, lease_owner, leased_at, lease_until, next_trigger, next_actor FROM deliveries
        WHERE state = 'in_flight' AND ${own ? "lease_owner = $4 AND (id, leased_at) IN (SELECT * FROM unnest($5::text[], $6::timestamptz[]))" : "lease_until < now()"}
        ORDER BY lease_until
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     ),
     upd AS (
       UPDATE deliveries d
          SET state = 'scheduled', next_attempt_at = now(),
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
     SELECT id, subscription_id AS "subscriptionId", lease_owner AS owner FROM upd`,
    own
      ? [opts.limit ?? 10_000, opts.errorClass, shutdownMessage, opts.owner, opts.ids ?? [], opts.claimTokens ?? []]
      : [opts.limit ?? 1000, opts.errorClass, reapMessage],
  );
  return rows;
}

const reapMessage = "The lease expired before a result was written: the worker crashed or stalled; the request may have been sent";
const shutdownMessage = "The worker shut down while the request was in flight; the request may have been sent";

/** Returns leased rows that were never sent to their prior state, unchanged otherwise. */
export async function releaseUnsent(
  db: pg.Pool | pg.PoolClient,
  owner: string,
  rows: { id: string; prevState: string; claimToken: string }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await db.query(
    `UPDATE deliveries d SET state = u.prev_state, lease_owner = NULL, lease_until = NULL, leased_at = NULL, updated_at = now()
       FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS u(id, prev_state, claim_token)
      WHERE d.id = u.id AND d.state = 'in_flight' AND d.lease_owner = $1 AND d.leased_at = u.claim_token`,
    [owner, rows.map((r) => r.id), rows.map((r) => r.prevState), rows.map((r) => r.claimToken)],
  );
  return r.rowCount ?? 0;
}

/** Stored (sealed) secrets that are still valid, newest first. */
export async function activeSecrets(db: pg.Pool | pg.PoolClient, subscriptionIds: string[]): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ subscription_id: string; secret: string }>(
    `SELECT subscription_id, secret FROM subscription_secrets
      WHERE subscription_id = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > now())
      ORDER BY created_at DESC, id`,
    [subscriptionIds],
  );
  const out = new Map<string, string[]>(subscriptionIds.map((id) => [id, []]));
  for (const r of rows) out.get(r.subscription_id)!.push(r.secret);
  return out;
}

export async function beat(db: pg.Pool, w: { workerId: string; hostname: string; pid: number; startedAt: Date }) {
  await db.query(
    `INSERT INTO worker_heartbeats (worker_id, hostname, pid, started_at, beat_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (worker_id) DO UPDATE SET beat_at = now(), stopped_at = NULL`,
    [w.workerId, w.hostname, w.pid, w.startedAt],
  );
}

export async function markStopped(db: pg.Pool, workerId: string) {
  await db.query("UPDATE worker_heartbeats SET stopped_at = now(), beat_at = now() WHERE worker_id = $1", [workerId]);
}
