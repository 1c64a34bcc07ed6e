// The end-of-run checks, each naming the deliveries that broke it.
// They read the ledger with plain SQL and compare it with what the receivers
// recorded on the wire; nothing here trusts the worker's own bookkeeping.
import type pg from "pg";
import type { ReceiverRecord } from "./receivers";

export type Offender = { deliveryId?: string; key?: string; detail: string };
export type InvariantResult = { name: string; description: string; ok: boolean; count: number; offenders: Offender[] };

/** Offenders kept per invariant in the report (the count is always exact). */
const KEEP = 500;

function result(name: string, description: string, offenders: Offender[]): InvariantResult {
  return { name, description, ok: offenders.length === 0, count: offenders.length, offenders: offenders.slice(0, KEEP) };
}

export type LedgerRow = {
  id: string;
  key: string;
  sub: string;
  state: string;
  reason: string | null;
  attempts: number;
  responded: number;
  ambiguous: number;
  abandoned: number;
  delivered2xx: number;
  deliveredAttempts: number;
};

export async function ledgerRows(pool: pg.Pool, subs: string[]): Promise<LedgerRow[]> {
  const { rows } = await pool.query<LedgerRow>(
    `SELECT d.id, d.delivery_key AS key, d.subscription_id AS sub, d.state, d.dead_letter_reason AS reason,
            count(a.id)::int AS attempts,
            count(a.id) FILTER (WHERE a.status_code IS NOT NULL)::int AS responded,
            count(a.id) FILTER (WHERE a.ambiguous)::int AS ambiguous,
            count(a.id) FILTER (WHERE a.outcome = 'abandoned')::int AS abandoned,
            count(a.id) FILTER (WHERE a.outcome = 'delivered' AND a.status_code BETWEEN 200 AND 299)::int AS "delivered2xx",
            count(a.id) FILTER (WHERE a.outcome = 'delivered')::int AS "deliveredAttempts"
       FROM deliveries d LEFT JOIN attempts a ON a.delivery_id = d.id
      WHERE d.subscription_id = ANY($1::text[])
      GROUP BY d.id, d.event_at`,
    [subs],
  );
  return rows;
}

/** 1. Every (event, subscription) has exactly one delivery row, keyed sha256(sub:event), and there are no others. */
export async function checkOneDeliveryPerPair(pool: pg.Pool, eventIds: string[], subs: string[]): Promise<InvariantResult> {
  const off: Offender[] = [];
  const { rows } = await pool.query<{ event_id: string; sub_id: string; n: number; ids: string[] | null }>(
    `WITH ev AS (SELECT unnest($1::text[]) AS event_id), s AS (SELECT unnest($2::text[]) AS sub_id)
     SELECT ev.event_id, s.sub_id, count(d.id)::int AS n, array_agg(d.id) FILTER (WHERE d.id IS NOT NULL) AS ids
       FROM ev CROSS JOIN s LEFT JOIN deliveries d ON d.event_id = ev.event_id AND d.subscription_id = s.sub_id
      GROUP BY 1, 2 HAVING count(d.id) <> 1`,
    [eventIds, subs],
  );
  for (const r of rows) off.push({ deliveryId: r.ids?.join(","), detail: `event ${r.event_id} × subscription ${r.sub_id}: ${r.n} delivery rows (want 1)` });
  const stray = await pool.query<{ id: string; event_id: string; sub: string }>(
    `SELECT d.id, d.event_id, d.subscription_id AS sub FROM deliveries d
      WHERE d.subscription_id = ANY($2::text[]) AND NOT EXISTS (SELECT 1 FROM unnest($1::text[]) e(id) WHERE e.id = d.event_id)`,
    [eventIds, subs],
  );
  for (const r of stray.rows) off.push({ deliveryId: r.id, detail: `delivery for event ${r.event_id} that the run never published (subscription ${r.sub})` });
  const badKey = await pool.query<{ id: string; delivery_key: string }>(
    `SELECT id, delivery_key FROM deliveries
      WHERE subscription_id = ANY($1::text[])
        AND delivery_key <> encode(sha256(convert_to(subscription_id || ':' || event_id, 'UTF8')), 'hex')`,
    [subs],
  );
  for (const r of badKey.rows) off.push({ deliveryId: r.id, key: r.delivery_key, detail: "delivery_key is not sha256(subscription_id:event_id)" });
  return result("one_delivery_per_event_subscription", "every (event, subscription) has exactly one delivery row with the key sha256(sub:event)", off);
}

/** 2. Every delivery is terminal: delivered, or dead_letter with a reason. */
export function checkTerminal(rows: LedgerRow[]): InvariantResult {
  const off = rows
    .filter((r) => !(r.state === "delivered" || (r.state === "dead_letter" && r.reason)))
    .map((r) => ({
      deliveryId: r.id,
      key: r.key,
      detail: `state ${r.state}${r.state === "dead_letter" ? " without a reason" : ""} (subscription ${r.sub}, ${r.attempts} attempts)`,
    }));
  return result("all_terminal", "every delivery ends delivered, or dead_letter with a reason", off);
}

/** 3. Every delivered row has exactly one delivered attempt, with a 2xx status. */
export function checkDelivered2xx(rows: LedgerRow[]): InvariantResult {
  const off: Offender[] = [];
  for (const r of rows) {
    if (r.state === "delivered" && (r.delivered2xx !== 1 || r.deliveredAttempts !== 1))
      off.push({
        deliveryId: r.id,
        key: r.key,
        detail: `delivered with ${r.delivered2xx} 2xx delivered attempts of ${r.deliveredAttempts} delivered attempts (want exactly 1)`,
      });
    if (r.state !== "delivered" && r.deliveredAttempts > 0)
      off.push({ deliveryId: r.id, key: r.key, detail: `state ${r.state} after a delivered attempt: a delivered row moved again` });
  }
  return result("delivered_has_2xx_attempt", "every delivered row has its one delivered attempt with a 2xx answer, and no delivered row moved again", off);
}

/**
 * 3b. At-most-once in effect from the sender's side (docs/DESIGN.md invariant 3): once a worker has a 2xx back, nobody sends the
 * delivery again; and each attempt number is written once (two rows with one number mean two results were
 * applied to one claim).
 */
export async function checkNoSendAfter2xx(pool: pg.Pool, subs: string[]): Promise<InvariantResult[]> {
  const after = await pool.query<{
    id: string;
    key: string;
    ok_id: number;
    ok_end: Date;
    later_id: number;
    later_start: Date;
    later_outcome: string;
    later_worker: string;
  }>(
    `SELECT d.id, d.delivery_key AS key, ok.id AS ok_id, ok.started_at + make_interval(secs => ok.duration_ms / 1000.0) AS ok_end,
            later.id AS later_id, later.started_at AS later_start, later.outcome AS later_outcome, later.worker_id AS later_worker
       FROM deliveries d
       JOIN attempts ok ON ok.delivery_id = d.id AND ok.status_code BETWEEN 200 AND 299
       JOIN attempts later ON later.delivery_id = d.id AND later.id <> ok.id
                          AND later.started_at > ok.started_at + make_interval(secs => ok.duration_ms / 1000.0)
      WHERE d.subscription_id = ANY($1::text[])
      ORDER BY d.id, later.id`,
    [subs],
  );
  const sentAgain = after.rows.map((r) => ({
    deliveryId: r.id,
    key: r.key,
    detail: `attempt ${r.ok_id} got a 2xx back at ${r.ok_end.toISOString()}, yet attempt ${r.later_id} (${r.later_outcome}, worker ${r.later_worker}) was started after it, at ${r.later_start.toISOString()}`,
  }));
  const dup = await pool.query<{ id: string; key: string; n: number; attempt_number: number; outcomes: string[]; ids: string[] }>(
    `SELECT a.delivery_id AS id, d.delivery_key AS key, a.attempt_number, count(*)::int AS n,
            array_agg(a.outcome || COALESCE(' ' || a.status_code, '') ORDER BY a.id) AS outcomes, array_agg(a.id::text ORDER BY a.id) AS ids
       FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
      WHERE a.subscription_id = ANY($1::text[])
      GROUP BY a.delivery_id, d.delivery_key, a.attempt_number HAVING count(*) > 1`,
    [subs],
  );
  const twice = dup.rows.map((r) => ({
    deliveryId: r.id,
    key: r.key,
    detail: `attempt number ${r.attempt_number} was written ${r.n} times (attempt rows ${r.ids.join(", ")}: ${r.outcomes.join(" / ")})`,
  }));
  return [
    result("no_send_after_2xx", "once a worker has a 2xx back for a delivery, no attempt of it starts afterwards (a delivered row is never sent again)", sentAgain),
    result("one_result_per_attempt", "each attempt number of a delivery is written once: no claim has two results applied", twice),
  ];
}

/**
 * 4. The wire against the ledger, per receiver and key:
 *   - the receiver saw no key the ledger does not know for that subscription;
 *   - every delivered key was applied at the receiver (nothing lost), once (de-duplicated);
 *   - a dead-lettered key the receiver applied had an ambiguous attempt (otherwise the ledger recorded a definite failure for a request that succeeded);
 *   - requests seen R vs attempt rows: responded ≤ R ≤ responded + ambiguous (every request has its attempt row; a request sent twice is one marked ambiguous or reaped);
 *   - every request carried the right key, Idempotency-Key and a signature that verifies.
 */
export function checkWire(rows: LedgerRow[], receivers: ReceiverRecord[]): InvariantResult[] {
  const bySub = new Map<string, Map<string, LedgerRow>>();
  for (const r of rows) {
    if (!bySub.has(r.sub)) bySub.set(r.sub, new Map());
    bySub.get(r.sub)!.set(r.key, r);
  }
  const unknown: Offender[] = [];
  const lost: Offender[] = [];
  const deadButApplied: Offender[] = [];
  const unrecorded: Offender[] = [];
  const wire: Offender[] = [];
  for (const rc of receivers) {
    const ledger = bySub.get(rc.subscriptionId) ?? new Map<string, LedgerRow>();
    for (const [key, n] of rc.requests)
      if (!ledger.has(key)) unknown.push({ key, detail: `${rc.behavior} receiver (${rc.subscriptionId}) got ${n} request(s) for a key the ledger does not know` });
    for (const p of rc.problems) wire.push({ key: p.key, deliveryId: ledger.get(p.key)?.id, detail: `${rc.behavior} receiver: ${p.problem}` });
    for (const r of ledger.values()) {
      const seen = rc.requests.get(r.key) ?? 0;
      const applied = rc.applied.has(r.key);
      if (r.state === "delivered" && !applied)
        lost.push({ deliveryId: r.id, key: r.key, detail: `ledger says delivered; the ${rc.behavior} receiver never applied it (${seen} requests seen)` });
      if (r.state === "dead_letter" && applied && r.ambiguous === 0)
        deadButApplied.push({
          deliveryId: r.id,
          key: r.key,
          detail: `dead-lettered (${r.reason}) with no ambiguous attempt, yet the ${rc.behavior} receiver applied it`,
        });
      if (seen > r.responded + r.ambiguous)
        unrecorded.push({
          deliveryId: r.id,
          key: r.key,
          detail: `${rc.behavior} receiver saw ${seen} requests; the ledger has ${r.attempts} attempts (${r.responded} answered, ${r.ambiguous} ambiguous/abandoned): ${seen - r.responded - r.ambiguous} request(s) without an attempt row`,
        });
      if (r.responded > seen)
        unrecorded.push({
          deliveryId: r.id,
          key: r.key,
          detail: `the ledger records ${r.responded} answered attempts; the ${rc.behavior} receiver saw only ${seen} requests`,
        });
    }
  }
  return [
    result("receiver_keys_known", "every key a receiver saw is a delivery the ledger knows for that subscription", unknown),
    result("delivered_applied_once", "every delivered row was applied at its receiver exactly once (de-duplicated on webhook-id): nothing lost", lost),
    result("dead_letter_not_applied", "a dead-lettered row the receiver applied had an ambiguous attempt (else the ledger contradicts the wire)", deadButApplied),
    result(
      "requests_match_attempts",
      "per key, answered attempts ≤ requests seen ≤ answered + ambiguous/abandoned attempts: every request has its attempt row, duplicates only where marked ambiguous or reaped",
      unrecorded,
    ),
    result("wire_identity_and_signature", "every request carries webhook-id = Idempotency-Key = sha256(sub:event) of its body and a signature that verifies", wire),
  ];
}

export type ExpectedAudit = { action: string; targetType: string; targetId: string; actor: string; after: Date };

/** 5. Every operator action of the run is in audit_entries (by action, target and actor). */
export async function checkAudit(pool: pg.Pool, expected: ExpectedAudit[]): Promise<InvariantResult> {
  const off: Offender[] = [];
  const used = new Set<number>();
  for (const e of expected) {
    const { rows } = await pool.query<{ id: number }>(
      `SELECT id FROM audit_entries WHERE action = $1 AND target_type = $2 AND target_id = $3 AND actor = $4 AND created_at >= $5::timestamptz - interval '5 seconds'
        ORDER BY id`,
      [e.action, e.targetType, e.targetId, e.actor, e.after],
    );
    const row = rows.find((r) => !used.has(Number(r.id)));
    if (row) used.add(Number(row.id));
    else off.push({ detail: `no audit row for ${e.action} of ${e.targetType} ${e.targetId} by ${e.actor}` });
  }
  return result("operator_actions_audited", "every operator action of the run (subscription create, pause, resume, bulk redrive) has its audit row", off);
}

/** 6. A paused subscription holds its deliveries: nothing reaches its receiver while paused. */
export function checkPauseHeld(rc: ReceiverRecord | undefined, window: { from: number; to: number } | null): InvariantResult {
  const off: Offender[] = [];
  if (!rc) off.push({ detail: "the paused subscription's receiver recorded nothing" });
  else if (window) {
    const during = rc.arrivals.filter((t) => t > window.from && t < window.to);
    if (during.length > 0)
      off.push({
        detail: `${during.length} request(s) reached the paused ${rc.behavior} receiver (${rc.subscriptionId}) between ${new Date(window.from).toISOString()} and ${new Date(window.to).toISOString()}`,
      });
  }
  return result("pause_holds", "no request reaches a paused subscription's receiver (after the in-flight ones finish)", off);
}
