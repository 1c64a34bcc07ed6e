// Every change of a subscription's state (active, paused, disabled) and of
// its archiving, each with its audit row, in one place: the table of
// transitions is docs/DESIGN.md, "A subscription is active, paused or
// disabled". Who makes each one:
//
//   active -> paused (failing)    the result write (failureWindowCtes), system
//   any -> disabled               the result write on a 410 (GONE_CTES), system
//   paused (failing) -> active    the first 2xx to a probe (resumeAfterProbe), system
//   active <-> paused (manual),
//   disabled -> active            an operator (changeStateByOperator)
//   archived / unarchived         an operator (archive, unarchive)
//
// The system's changes are parts of the worker's statements (its result write,
// its probe), so each lands in the transaction of the attempt or probe that
// caused it. An operator's change runs in the caller's transaction (a Prisma
// interactive transaction, as a LedgerDb) beside its configuration writes.
// Audit rows are written here in SQL with the action names and detail shapes
// of lib/audit.ts (a test holds both to its list); their tenant is set by the
// audit_entries trigger from the subscription. test/codebase checks that no
// other file writes a subscription's state, pause or archive columns.
//
// Row locks. A producer's transaction that has published an event holds KEY
// SHARE on each matched subscription's row until it commits (the enqueue
// takes it, so that an archive waits for it), and a steady producer always
// has one open. PostgreSQL lets each new KEY SHARE in ahead of a waiting FOR
// UPDATE, so a change locking the row FOR UPDATE can wait as long as the
// traffic lasts: a pause during an incident answered 503 after the statement
// timeout. The pause, the resume and the probe's resume therefore lock FOR
// NO KEY UPDATE (what an UPDATE takes), which KEY SHARE does not block; so do
// a secret's rotation (lib/subscriptions/rotation.ts) and the probe's claim
// (./probe.ts, whose SKIP LOCKED passed over every row a producer held). An
// archive must see what those producers insert: it commits first, so that
// later ones leave the subscription alone, and only then waits FOR UPDATE for
// the earlier ones (supersedeAfterArchive). A tenant move checks for history
// before it waits.
import "server-only";
import type pg from "pg";
import { DELIVERIES_CHANNEL } from "../notify";
import { execute, queryRows, sql, type LedgerDb } from "../read/db";
import { countInFlight, supersedeQueuedDeliveries } from "./archive";

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

/** A success in the batch that ends the subscription's stored run: one started at or after the run's first failure (or no run is stored). */
const ENDS_RUN = "(fw_in.ok_at IS NOT NULL AND (s.failing_since IS NULL OR fw_in.ok_at >= s.failing_since))";

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
 * success for the subscription (a success ends the run before it). Across
 * batches the order is the attempts' start, not their results' arrival: with
 * parallel sends a slow success can be written after the failures that started
 * after it, and it ends the stored run only if it started at or after the run's
 * start (ENDS_RUN); before that, the batch's failures join the run. Attempts
 * are counted whatever they failed with: a permanent 4xx costs an attempt as
 * much as a 503. With a 410 in the batch (`gone`), the subscriptions it
 * disables are left to that update: one statement cannot update a row twice.
 */
export const failureWindowCtes = (gone: boolean) => `,
     fw_in AS (
       SELECT sid, max(at) FILTER (WHERE ok) AS ok_at,
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
                          FROM (SELECT CASE WHEN ${ENDS_RUN} THEN fw_in.n_fail ELSE s.failing_attempts + fw_in.n_fail END AS attempts,
                                       CASE WHEN ${ENDS_RUN} THEN fw_in.first_fail ELSE LEAST(s.failing_since, fw_in.first_fail) END AS since) a) v)
         FROM fw_in
        WHERE s.id = fw_in.sid
          AND CASE WHEN ${ENDS_RUN} THEN s.failing_attempts <> fw_in.n_fail OR s.failing_since IS DISTINCT FROM fw_in.first_fail
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

/**
 * For a result batch with a 410 among it: the subscription disabled and the
 * audit row, in the same statement (so the same transaction) as the result.
 * Left out of the statement otherwise: planning and running it for every batch
 * cost the hot path for what is rare.
 */
export const GONE_CTES = `,
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

/**
 * A probe's 2xx to a subscription still paused for failing: the subscription
 * active again with its failure run cleared, its held deliveries due at once
 * in the order they were created, the audit row by the system, and
 * hookledger.subscription.recovered, in one statement. "gone" when it is no
 * longer paused for failing (a manual resume or pause meanwhile wins).
 */
export async function resumeAfterProbe(
  db: pg.Pool | pg.PoolClient,
  a: { subscriptionId: string; status: number | null; latencyMs: number; at: Date },
): Promise<"resumed" | "gone"> {
  const { rows } = await db.query<{ held: string }>(
    `WITH was AS (
       SELECT id, name, tenant, paused_at, failing_since FROM subscriptions
        WHERE id = $1 AND state = 'paused' AND paused_reason = 'failing' FOR NO KEY UPDATE
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

/**
 * An operator's pause or resume (or the deliberate reactivation of a disabled
 * subscription), with its `subscription.pause` or `subscription.resume` audit
 * row. A pause is `manual` and stops any probing; a resume clears the reason,
 * the failure run and the probe schedule, and wakes the workers so held
 * deliveries flow at once. No row changes when the state is already `to`.
 */
export async function changeStateByOperator(
  db: LedgerDb,
  id: string,
  c: { to: "active" | "paused"; actor: string; reason: string | null },
): Promise<{ from: string } | null> {
  const stateReason = c.to === "active" ? null : (c.reason ?? "paused by an operator");
  const [row] = await queryRows<{ from: string }>(
    db,
    sql`WITH was AS (SELECT id, state FROM subscriptions WHERE id = ${id} AND state <> ${c.to}::text FOR NO KEY UPDATE),
        up AS (
          UPDATE subscriptions s
             SET state = ${c.to}::text, state_reason = ${stateReason}::text,
                 paused_reason = CASE WHEN ${c.to}::text = 'paused' THEN 'manual' END,
                 paused_at = CASE WHEN ${c.to}::text = 'paused' THEN now() END,
                 next_probe_at = NULL,
                 failing_since = CASE WHEN ${c.to}::text = 'paused' THEN s.failing_since END,
                 failing_attempts = CASE WHEN ${c.to}::text = 'paused' THEN s.failing_attempts ELSE 0 END,
                 updated_at = now()
            FROM was WHERE s.id = was.id
          RETURNING s.id),
        aud AS (
          INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
          SELECT ${c.actor}, CASE WHEN ${c.to}::text = 'paused' THEN 'subscription.pause' ELSE 'subscription.resume' END, 'subscription', was.id,
                 ${c.reason}::text, jsonb_build_object('from', was.state, 'to', ${c.to}::text)
            FROM was JOIN up ON up.id = was.id
          RETURNING 1)
        SELECT was.state AS "from", (SELECT count(*)::int FROM aud) AS audited
          FROM was JOIN up ON up.id = was.id`,
  );
  if (!row) return null;
  if (c.to === "active") await notifyWorkers(db, id);
  return { from: row.from };
}

/**
 * Archives a subscription (docs/DESIGN.md, Archived subscriptions): records
 * who and why, resolves its queued deliveries as `superseded` (./archive.ts)
 * and writes `subscription.archive`. The row is locked FOR NO KEY UPDATE, so
 * the archive does not wait for the producers publishing to it (Row locks,
 * above); once it commits they match no event to it, and
 * supersedeAfterArchive, in a transaction of its own, waits for those that
 * wrote for it before (their rows are not visible here) and supersedes what
 * they wrote. null when there is no such subscription; the archive time when
 * it was already archived (nothing changes).
 */
export async function archive(
  db: LedgerDb,
  id: string,
  c: { actor: string; reason: string },
): Promise<null | { alreadyArchivedAt: Date } | { superseded: number; inFlight: number; previousState: string }> {
  const [row] = await queryRows<{ archived_at: Date | null; state: string }>(db, sql`SELECT archived_at, state FROM subscriptions WHERE id = ${id} FOR NO KEY UPDATE`);
  if (!row) return null;
  if (row.archived_at) return { alreadyArchivedAt: row.archived_at };
  await execute(db, sql`UPDATE subscriptions SET archived_at = now(), archive_reason = ${c.reason}, archived_by = ${c.actor}, updated_at = now() WHERE id = ${id}`);
  const superseded = await supersedeQueuedDeliveries(db, id, c);
  const inFlight = await countInFlight(db, id);
  await execute(
    db,
    sql`INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
        VALUES (${c.actor}, 'subscription.archive', 'subscription', ${id}, ${c.reason},
                jsonb_build_object('superseded', ${superseded}::int, 'inFlight', ${inFlight}::int, 'previousState', ${row.state}::text))`,
  );
  return { superseded, inFlight, previousState: row.state };
}

/**
 * The second half of an archive, after its commit: waits for the enqueues and
 * backfills that wrote deliveries for the subscription before it (each holds
 * KEY SHARE on the row until its commit; later ones match nothing to an
 * archived subscription, so the wait ends) and supersedes what they wrote,
 * one `delivery.resolve` audit row each. Returns how many. Should it never
 * run, those deliveries wait on the archived subscription like a retry of one
 * that was in flight: visible, and due again on an unarchive.
 */
export async function supersedeAfterArchive(db: LedgerDb, id: string, c: { actor: string; reason: string }): Promise<number> {
  const [row] = await queryRows<{ id: string }>(db, sql`SELECT id FROM subscriptions WHERE id = ${id} AND archived_at IS NOT NULL FOR UPDATE`);
  return row ? supersedeQueuedDeliveries(db, id, c) : 0;
}

/**
 * Unarchives a subscription, with `subscription.unarchive` saying when, by
 * whom and why it had been archived; wakes the workers, so anything held while
 * it was archived (a retry of a delivery that was in flight then) flows again.
 * null when there is no such subscription; "not_archived" when it is live
 * (nothing changes).
 */
export async function unarchive(db: LedgerDb, id: string, c: { actor: string; reason: string }): Promise<null | "not_archived" | "unarchived"> {
  const [row] = await queryRows<{ archived_at: Date | null }>(db, sql`SELECT archived_at FROM subscriptions WHERE id = ${id} FOR UPDATE`);
  if (!row) return null;
  if (!row.archived_at) return "not_archived";
  await execute(
    db,
    sql`WITH was AS (SELECT id, archived_at, archived_by, archive_reason FROM subscriptions WHERE id = ${id}),
        up AS (UPDATE subscriptions SET archived_at = NULL, archive_reason = NULL, archived_by = NULL, updated_at = now() WHERE id = ${id} RETURNING id)
        INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
        SELECT ${c.actor}, 'subscription.unarchive', 'subscription', was.id, ${c.reason},
               jsonb_build_object('archivedAt', to_char(was.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                  'archivedBy', coalesce(was.archived_by, ''), 'archiveReason', coalesce(was.archive_reason, ''))
          FROM was JOIN up ON up.id = was.id`,
  );
  await notifyWorkers(db, id);
  return "unarchived";
}

/** Wakes the workers for the subscription's deliveries (delivered on commit). */
async function notifyWorkers(db: LedgerDb, id: string): Promise<void> {
  await execute(db, sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${id})`);
}
