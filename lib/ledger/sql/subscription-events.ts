// The events one subscription has a delivery of, as a condition on an events id column: a district portal opened for
// one subscription (lib/tenants/scope.ts eventTenantWhere) sees those events only, not the rest of its tenant's.
import "server-only";
import { raw, sql, type Sql } from "../read/db";

/** `<idColumn> IN (the event ids of the subscription's deliveries)`; the column is a fixed string of the caller's. */
export function eventDeliveredTo(idColumn: "e.id" | "id", subscriptionId: string): Sql {
  return sql`${raw(idColumn)} IN (SELECT dx.event_id FROM deliveries dx WHERE dx.subscription_id = ${subscriptionId})`;
}
