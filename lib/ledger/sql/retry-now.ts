// "Retry now" for a scheduled delivery: due at once, the next attempt recorded
// as trigger `manual` by `actor`. Guarded like every transition (docs/DESIGN.md
// invariant 3): only a row still scheduled, on an active subscription, moves.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";

/** True when the delivery moved. */
export async function retryNow(db: LedgerDb, id: string, actor: string): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`UPDATE deliveries d
           SET next_attempt_at = now(), next_trigger = 'manual', next_actor = ${actor}, updated_at = now()
         WHERE d.id = ${id}
           AND d.state = 'scheduled'
           AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.state = 'active')
        RETURNING d.id`,
  );
  return rows.length > 0;
}
