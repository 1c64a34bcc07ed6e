// Whether the ledger holds events of a type: the event catalog keeps such a type (deprecated) instead of deleting it
// (lib/catalog/manage-event-types.ts). One probe of events_type_created.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";

export async function hasEventsOfType(db: LedgerDb, type: string): Promise<boolean> {
  const [row] = await queryRows<{ found: boolean }>(db, sql`SELECT EXISTS (SELECT 1 FROM events WHERE type = ${type}) AS found`);
  return row?.found === true;
}
