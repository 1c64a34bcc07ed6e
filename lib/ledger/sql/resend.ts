// Resend: a delivered or resolved delivery sent again on an operator's word.
// The same row, key and stored bytes go out once more (the worker signs them
// afresh at send time); the next attempt is recorded as trigger `resend` by
// the operator, so the timeline shows why a delivered row was tried again.
// Guarded like every transition (docs/DESIGN.md invariant 3): only a row still
// delivered or resolved, on an active subscription, moves; two concurrent
// resends move it once.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";
import { refuseTombstoned } from "./redrive";

/** True when the delivery moved to pending. A delivery whose event was erased is a 409 (its payload is gone). */
export async function resendDelivery(db: LedgerDb, id: string, actor: string): Promise<boolean> {
  await refuseTombstoned(db, [id], "resent");
  const rows = await queryRows<{ id: string }>(
    db,
    sql`UPDATE deliveries d
           SET state = 'pending', attempt_count = 0, run_started_at = now(), next_attempt_at = now(),
               next_trigger = 'resend', next_actor = ${actor},
               delivered_at = NULL, dead_letter_reason = NULL, dead_lettered_at = NULL,
               resolution = NULL, resolved_at = NULL, resolved_by = NULL, resolution_reason = NULL,
               lease_owner = NULL, lease_until = NULL, updated_at = now()
         WHERE d.id = ${id}
           AND d.state IN ('delivered', 'resolved')
           AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active')
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.created_at = d.event_at AND e.tombstone IS NOT NULL)
        RETURNING d.id`,
  );
  return rows.length > 0;
}
