// The lookup box's reads of events themselves (lib/dashboard/lookup.ts): what
// each found delivery's event is about (its subject), the events a search names
// that no subscription took (so "received, nobody subscribed" is told apart
// from "never received"), and whether an event exists for a caller (a
// resolution's corrected event, lib/resolve).
import "server-only";
import { empty, iso, queryRows, sql, type LedgerDb } from "../read/db";
import { eventTenantWhere, subjectValuesInScope, type Scope } from "../../tenants/scope";

export type EventSubject = Record<string, string>;

/** The subject of each event (events pk, one probe an id), by event id; an erased event's subject is what erasure left. */
export async function findEventSubjects(db: LedgerDb, eventIds: string[]): Promise<Map<string, EventSubject>> {
  const out = new Map<string, EventSubject>();
  if (eventIds.length === 0) return out;
  const rows = await queryRows<{ id: string; subject: Record<string, unknown> | null }>(
    db,
    sql`SELECT id, subject FROM events WHERE id = ANY(${[...new Set(eventIds)]}::text[])`,
  );
  for (const r of rows) out.set(r.id, Object.fromEntries(Object.entries(r.subject ?? {}).map(([k, v]) => [k, String(v)])));
  return out;
}

/**
 * The data of the events whose type names summary fields in the event catalog, with those fields, by event id (events
 * pk, one probe an id). Erased and expunged events, and payloads over 64 KB, are left out: a card shows a few values,
 * never reason enough to read a large payload.
 */
export async function findSummaryData(db: LedgerDb, eventIds: string[]): Promise<Map<string, { fields: string[]; data: unknown }>> {
  const out = new Map<string, { fields: string[]; data: unknown }>();
  if (eventIds.length === 0) return out;
  const rows = await queryRows<{ id: string; fields: string[]; data: unknown }>(
    db,
    sql`SELECT e.id, t.summary_fields AS fields, convert_from(e.payload, 'UTF8')::jsonb -> 'data' AS data
          FROM events e JOIN event_types t ON t.type = e.type AND t.summary_fields <> '{}'
         WHERE e.id = ANY(${[...new Set(eventIds)]}::text[]) AND e.tombstone IS NULL AND octet_length(e.payload) <= 65536`,
  );
  for (const r of rows) out.set(r.id, { fields: r.fields, data: r.data });
  return out;
}

export type UnroutedEvent = { id: string; type: string; tenant: string | null; receivedAt: string; subject: EventSubject };

/**
 * Events `q` names in `scope` that have no delivery at all: no subscription matched them when they were published.
 * By id always (events pk); by a subject value (the events_subject_values GIN index) only with `bySubject`, among
 * the newest 200 events it names: the lookup asks so only when the search found no delivery, since a value common
 * to many events (a district's, a school's) costs that index's whole read. Each NOT EXISTS is one probe of
 * deliveries_event_id_subscription_id_key. Newest first, at most `limit`.
 */
export async function findUnroutedEvents(db: LedgerDb, q: string, limit: number, scope: Scope, opts: { bySubject: boolean }): Promise<UnroutedEvent[]> {
  const bySubject = opts.bySubject
    ? sql`UNION (SELECT id, created_at FROM events WHERE subject_values @> ${subjectValuesInScope(scope, q)}::text[] AND ${eventTenantWhere(scope)}
                  ORDER BY created_at DESC LIMIT 200)`
    : empty;
  const rows = await queryRows<{ id: string; type: string; tenant: string | null; created_at: Date; subject: Record<string, unknown> | null }>(
    db,
    sql`SELECT e.id, e.type, e.tenant, e.created_at, e.subject
          FROM ((SELECT id, created_at FROM events WHERE id = ${q} AND ${eventTenantWhere(scope)}) ${bySubject}) m
          JOIN events e ON e.id = m.id AND e.created_at = m.created_at
         WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at)
         ORDER BY e.created_at DESC LIMIT ${limit}::int`,
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    tenant: r.tenant,
    receivedAt: iso(r.created_at)!,
    subject: Object.fromEntries(Object.entries(r.subject ?? {}).map(([k, v]) => [k, String(v)])),
  }));
}

/** An event by id as a caller in `scope` may see it (its own tenant's events only when scoped); null when there is none. */
export async function findEventInScope(db: LedgerDb, eventId: string, scope: Scope): Promise<{ id: string; type: string; tenant: string | null } | null> {
  const rows = await queryRows<{ id: string; type: string; tenant: string | null }>(
    db,
    sql`SELECT id, type, tenant FROM events WHERE id = ${eventId} AND ${eventTenantWhere(scope)} LIMIT 1`,
  );
  return rows[0] ?? null;
}
