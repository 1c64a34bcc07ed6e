// Archiving a subscription, the ledger's part: its queued deliveries (pending
// and scheduled) are resolved as `superseded` in one guarded statement, with
// one `delivery.resolve` audit row per moved delivery written by the same
// statement (as a bulk resolve does), so each delivery's timeline says who
// retired it and why. Rows in flight are left to the worker: it records their
// attempt as it happened. Identity (delivery_key, event, bytes) is never written.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";

/**
 * Resolves every queued delivery of the subscription as `superseded`; returns
 * how many moved. Call it after locking the subscription row FOR UPDATE in the
 * same transaction: that waits for an enqueue or backfill which already
 * inserted rows for it (each holds a KEY SHARE lock on the row until its
 * commit, migration 0024) to commit, so this statement's snapshot sees those rows too.
 */
export async function supersedeQueuedDeliveries(db: LedgerDb, subscriptionId: string, d: { actor: string; reason: string }): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`WITH moved AS (
          UPDATE deliveries
             SET state = 'resolved', resolution = 'superseded', resolved_at = now(), resolved_by = ${d.actor},
                 resolution_reason = ${d.reason}, lease_owner = NULL, lease_until = NULL, updated_at = now()
           WHERE subscription_id = ${subscriptionId} AND state IN ('pending', 'scheduled')
          RETURNING id, subscription_id, event_id, delivery_key, dead_letter_reason),
        audited AS (
          INSERT INTO audit_entries (actor, action, target_type, target_id, reason, details)
          SELECT ${d.actor}, 'delivery.resolve', 'delivery', m.id, ${d.reason},
                 jsonb_build_object('subscriptionId', m.subscription_id, 'eventId', m.event_id, 'deliveryKey', m.delivery_key,
                                    'resolution', 'superseded', 'deadLetterReason', m.dead_letter_reason, 'bulkId', NULL::text)
            FROM moved m)
        SELECT count(*)::int AS n FROM moved`,
  );
  return r?.n ?? 0;
}

/** Deliveries of the subscription on the wire right now (the archive reports them: they finish and are recorded as they happen). */
export async function countInFlight(db: LedgerDb, subscriptionId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = ${subscriptionId} AND state = 'in_flight'`);
  return r?.n ?? 0;
}

/**
 * The event types producers have published, for the "New subscription"
 * dialog: a loose index scan over events_type_created (one index probe per
 * distinct type), so it costs the number of types, not the number of events;
 * with a tenant, that tenant's recently published types only.
 */
export async function findPublishedEventTypes(db: LedgerDb, limit = 500, tenant: string | null = null): Promise<string[]> {
  if (tenant !== null) {
    // One district's types: only its own events can reach its subscriptions
    // (hl_subscription_matches), and another district's type names are not
    // its to read. Its latest events, newest first through events_tenant_created:
    // bounded, where a loose scan of the type index would wade through every
    // other district's rows.
    const own = await queryRows<{ type: string }>(
      db,
      sql`SELECT DISTINCT type FROM (SELECT type FROM events WHERE tenant = ${tenant} ORDER BY created_at DESC LIMIT 5000) r ORDER BY type LIMIT ${limit}::int`,
    );
    return own.map((r) => r.type);
  }
  const rows = await queryRows<{ type: string }>(
    db,
    sql`WITH RECURSIVE t AS (
          (SELECT type FROM events ORDER BY type LIMIT 1)
          UNION ALL
          SELECT (SELECT e.type FROM events e WHERE e.type > t.type ORDER BY e.type LIMIT 1) FROM t WHERE t.type IS NOT NULL)
        SELECT type FROM t WHERE type IS NOT NULL LIMIT ${limit}::int`,
  );
  return rows.map((r) => r.type);
}

/**
 * Publishes one of hookledger's operational events (lib/ops-events) through
 * hl_publish_ops_event, in the caller's transaction, to the subscriptions
 * that name its type; returns the event id.
 */
export async function publishOpsEvent(
  db: LedgerDb,
  e: { type: string; tenant: string | null; subject: Record<string, string>; data: Record<string, unknown> },
): Promise<string> {
  const [r] = await queryRows<{ id: string }>(
    db,
    sql`SELECT hl_publish_ops_event(${e.type}, ${e.tenant}, ${JSON.stringify(e.subject)}::jsonb, ${JSON.stringify(e.data)}::jsonb) AS id`,
  );
  return r.id;
}
