// One delivery by id with its attempts, oldest first: what the public
// GET /api/v1/deliveries/:id, the dashboard's delivery page and the redrive
// service read. Primary-key lookups (deliveries, subscriptions, events) and
// attempts_delivery.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";
import { DELIVERY_COLUMNS, toDeliveryRecord, type DeliveryRow } from "../read/map";
import type { DeliveryRecord, DeliveryWithAttempts } from "../read/types";
import { findAttempts } from "./find-deliveries";
import { GLOBAL_SCOPE, scopeWhere, type Scope } from "../../tenants/scope";

export type DeliveryDetailRecord = DeliveryWithAttempts & {
  subscriptionUrl: string;
  /** The stored event bytes (what the receiver gets), when asked for. */
  payload: Buffer | null;
};

/** The delivery alone; null when there is none (or it is outside `scope`: another tenant's delivery does not exist for a scoped caller). */
export async function getDelivery(db: LedgerDb, id: string, scope: Scope = GLOBAL_SCOPE): Promise<DeliveryRecord | null> {
  const rows = await queryRows<DeliveryRow>(
    db,
    sql`SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id WHERE d.id = ${id} AND ${scopeWhere(scope)}`,
  );
  return rows[0] ? toDeliveryRecord(rows[0]) : null;
}

/** The delivery with every attempt (excerpts whole), its subscription's URL and optionally its payload; null when there is none. */
export async function getDeliveryWithAttempts(db: LedgerDb, id: string, opts: { payload?: boolean; scope?: Scope } = {}): Promise<DeliveryDetailRecord | null> {
  const inScope = scopeWhere(opts.scope ?? GLOBAL_SCOPE);
  const rows = await queryRows<DeliveryRow & { url: string; payload: Buffer | Uint8Array | null }>(
    db,
    opts.payload
      ? sql`SELECT ${DELIVERY_COLUMNS}, s.url, e.payload
              FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id JOIN events e ON e.id = d.event_id AND e.created_at = d.event_at
             WHERE d.id = ${id} AND ${inScope}`
      : sql`SELECT ${DELIVERY_COLUMNS}, s.url, NULL::bytea AS payload
              FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
             WHERE d.id = ${id} AND ${inScope}`,
  );
  const r = rows[0];
  if (!r) return null;
  const attempts = await findAttempts(db, [id]);
  return {
    ...toDeliveryRecord(r),
    attempts: attempts.get(id) ?? [],
    subscriptionUrl: r.url,
    payload: r.payload ? Buffer.from(r.payload) : null,
  };
}
