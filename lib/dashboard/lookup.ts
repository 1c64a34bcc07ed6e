// Lookup (the support home page): one box for an event id, a delivery key or
// id, any subject value (student id, assignment id… via the events_subject_values
// GIN index), a tenant, or a subscription id or name.
import { z } from "zod";
import { attemptsFor, db, DELIVERY_COLUMNS, toDeliveryLite, type Db, type DeliveryRow } from "./sql";
import type { DeliveryLite } from "./describe";

export const ZLookup = z.object({
  q: z.string().trim().min(1).max(200),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export type TLookup = z.input<typeof ZLookup>;

export type SubscriptionMatch = { id: string; name: string; tenant: string | null; state: string; url: string };
export type LookupResult = { q: string; deliveries: DeliveryLite[]; subscriptions: SubscriptionMatch[]; truncated: boolean };

export async function findLookupResults(opts: TLookup, pool: Db = db()): Promise<LookupResult> {
  const { q, limit } = ZLookup.parse(opts);
  const { rows: subs } = await pool.query<SubscriptionMatch>(
    `SELECT id, name, tenant, state, url FROM subscriptions
     WHERE id = $1 OR tenant = $1 OR name ILIKE '%' || $2 || '%'
     ORDER BY (id = $1) DESC, name LIMIT 20`,
    [q, q.replace(/[\\%_]/g, (c) => `\\${c}`)],
  );
  // Each branch is an index lookup: events pk, the subject GIN, events by
  // tenant, delivery key/id, and a subscription's newest deliveries.
  const { rows } = await pool.query<DeliveryRow>(
    `WITH ev AS (
       (SELECT id FROM events WHERE id = $1)
       UNION (SELECT id FROM events WHERE subject_values @> ARRAY[$1]::text[] ORDER BY created_at DESC LIMIT $2 + 1)
       UNION (SELECT id FROM events WHERE tenant = $1 ORDER BY created_at DESC LIMIT $2 + 1)
     ), ids AS (
       (SELECT d.id FROM deliveries d WHERE d.event_id IN (SELECT id FROM ev))
       UNION (SELECT d.id FROM deliveries d WHERE d.delivery_key = $1 OR d.id = $1)
       UNION (SELECT d.id FROM deliveries d WHERE d.subscription_id = $1 ORDER BY d.id DESC LIMIT $2 + 1)
     )
     SELECT ${DELIVERY_COLUMNS}
     FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
     WHERE d.id IN (SELECT id FROM ids)
     ORDER BY d.id DESC LIMIT $2 + 1`,
    [q, limit],
  );
  const page = rows.slice(0, limit);
  const attempts = await attemptsFor(pool, page.map((r) => r.id));
  return {
    q,
    deliveries: page.map((r) => toDeliveryLite(r, attempts.get(r.id) ?? [])),
    subscriptions: subs,
    truncated: rows.length > limit,
  };
}
