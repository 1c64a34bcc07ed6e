// Payload expunge by age (docs/DESIGN.md, Retention): an event older than its
// tenant's payload retention, whose deliveries are all finished, keeps its row
// and its deliveries' records (key, times, statuses, status codes) but loses
// what held or could echo the payload, as an erasure does (./erase.ts), with
// tombstone = 'expunged' and no erasure id (migration 0019's columns):
//   events      payload -> EXPUNGED_PAYLOAD, subject -> {"expunged": true},
//               subject_values -> {}, content_hash -> NULL;
//   deliveries  last_error_message -> NULL;
//   attempts    response_excerpt, response_headers, error_message -> NULL;
//   test_sends  the same, for tests that re-sent the event.
// An event with a pending, scheduled, in-flight or dead-lettered delivery is
// never expunged: its bytes are still to be sent (or may be redriven). Once
// expunged, nothing sends it again: the single redrive and resend answer 409,
// the trigger hl_tombstoned_not_sent skips any other statement, and a test
// send of the event is refused.
import "server-only";
import { queryRows, sql, type LedgerDb } from "../read/db";
import { eventRemovable, type Keyset, type TenantDays } from "./retention";

/** What an expunged event's payload becomes: fixed bytes, so a reader that parses payloads still gets JSON. */
const EXPUNGED_PAYLOAD = Buffer.from('{"expunged":true}', "utf8");

const tenantIs = (tenant: string | null) => (tenant === null ? sql`e.tenant IS NULL` : sql`e.tenant = ${tenant}`);

/** A live event none of whose deliveries is still to be sent or in the DLQ. */
const EXPUNGEABLE = sql`e.tombstone IS NULL
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at AND d.state IN ('pending', 'scheduled', 'in_flight', 'dead_letter') OFFSET 0)`;

export type ExpungeBatch = { scanned: number; expunged: number; next: Keyset };

/**
 * Expunges one batch of a tenant's events older than `days`, walking
 * events_tenant_created in (created_at, id) order after the keyset. Run it in a
 * transaction (`db` a client inside BEGIN): the first statement locks the
 * batch's delivery rows in id order, the second (a fresh snapshot, after the
 * locks) writes the tombstones, so a resend or redrive that committed while
 * the locks were awaited is seen and its event left for a later run, and one
 * that comes after waits and then finds the tombstone.
 */
export async function expungeEvents(db: LedgerDb, tenant: string | null, days: number, after: Keyset, limit: number): Promise<ExpungeBatch> {
  const scan = await queryRows<{ id: string; created_at: string }>(
    db,
    sql`SELECT e.id, e.created_at::text AS created_at FROM events e
         WHERE ${tenantIs(tenant)} AND e.created_at < now() - make_interval(days => ${days}::int)
           AND e.created_at >= coalesce(${after.at}::timestamptz, '-infinity')
           AND (e.created_at, e.id) > (coalesce(${after.at}::timestamptz, '-infinity'), ${after.id}::text)
         ORDER BY e.created_at, e.id
         LIMIT ${limit}::int`,
  );
  if (scan.length === 0) return { scanned: 0, expunged: 0, next: after };
  const last = scan[scan.length - 1];
  const next = { at: last.created_at, id: last.id };
  const ids = scan.map((r) => r.id);
  await queryRows(db, sql`SELECT d.id FROM deliveries d WHERE d.event_id = ANY(${ids}::text[]) ORDER BY d.id FOR UPDATE`);
  const [r] = await queryRows<{ expunged: number }>(
    db,
    sql`WITH ev AS (
          UPDATE events e
             SET payload = ${EXPUNGED_PAYLOAD}, subject = '{"expunged": true}'::jsonb, subject_values = '{}', content_hash = NULL,
                 tombstone = 'expunged', tombstoned_at = now(), erasure_id = NULL
           WHERE e.id = ANY(${ids}::text[]) AND ${EXPUNGEABLE}
          RETURNING e.id),
        msg AS (
          UPDATE deliveries d SET last_error_message = NULL, updated_at = now()
           WHERE d.event_id IN (SELECT id FROM ev) AND d.last_error_message IS NOT NULL
          RETURNING 1),
        att AS (
          UPDATE attempts a SET response_excerpt = NULL, response_headers = NULL, error_message = NULL
           WHERE a.delivery_id IN (SELECT d.id FROM deliveries d WHERE d.event_id IN (SELECT id FROM ev))
             AND (a.response_excerpt IS NOT NULL OR a.response_headers IS NOT NULL OR a.error_message IS NOT NULL)
          RETURNING 1),
        tst AS (
          UPDATE test_sends t SET response_excerpt = NULL, response_headers = NULL, error_message = NULL
           WHERE t.event_id IN (SELECT id FROM ev) AND (t.response_excerpt IS NOT NULL OR t.response_headers IS NOT NULL OR t.error_message IS NOT NULL)
          RETURNING 1)
        SELECT (SELECT count(*) FROM ev)::int AS expunged`,
  );
  return { scanned: scan.length, expunged: r.expunged, next };
}

/** How many of a tenant's events an expunge at `days` would tombstone, leaving out those the run removes first (a dry run; changes nothing). */
export async function countExpungeable(db: LedgerDb, tenant: string | null, days: number, removal: { p: TenantDays; days: number }): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM events e
         WHERE ${tenantIs(tenant)} AND e.created_at < now() - make_interval(days => ${days}::int) AND ${EXPUNGEABLE}
           AND NOT ${eventRemovable(removal.p, sql`(now() - make_interval(days => ${removal.days}::int))`)}`,
  );
  return r.n;
}
