// Erasure (docs/DESIGN.md, Erasure): the statements that find the events a
// subject names and turn them into tombstones (migration 0019). A tombstoned
// event keeps its id, type, times and tenant, and its deliveries keep their
// key, times and states, so the ledger still answers "was it sent, when, what
// came back" by status; everything that held or could echo the payload goes:
//   events      payload -> TOMBSTONE_PAYLOAD, subject -> {"erased": true},
//               subject_values -> {} (so the lookup and the GIN index forget
//               it), content_hash -> NULL (a hash of a student id and a grade
//               is a dictionary attack away from them);
//   deliveries  last_error_message -> NULL (a receiver may echo the body);
//               pending, scheduled, in-flight and dead-lettered ones resolved
//               `erased`, so nothing sends the tombstone;
//   attempts    response_excerpt, response_headers, error_message -> NULL;
//   test_sends  the same, for an operator's test send of the event's bytes;
//   operational events about those deliveries (hookledger.delivery.dead_lettered
//               carries the last error message) are tombstoned the same way.
// The statements are chunked by the caller (lib/erasure/create-erasure.ts): one
// transaction per chunk of events. tombstoneEvents takes the kind so that a
// payload expunge by age can write the same tombstone as 'expunged'.
import "server-only";
import { empty, queryRows, sql, type LedgerDb, type Sql } from "../read/db";

/** What a tombstoned event's payload becomes: fixed bytes, so a reader that parses payloads still gets JSON. */
const TOMBSTONE_PAYLOAD = Buffer.from('{"erased":true}', "utf8");
/** Events per transaction: 500 events at fan-out 3 is 1,500 delivery rows locked at a time, a few tens of ms. */
export const ERASE_CHUNK = 500;

/** One searchable subject key and value (the ingest stores `key:value` in subject_values), optionally within one tenant. */
export type SubjectMatch = { key: string; value: string; tenant: string | null };

/** The ingest's searchable form of a subject pair (lib/events/publish.ts subjectValues). */
const searchable = (m: SubjectMatch) => `${m.key}:${m.value}`;

/** Live (not yet tombstoned) events whose subject holds key = value, in the tenant when given: the GIN index on subject_values. */
const matching = (m: SubjectMatch) =>
  sql`SELECT e.id FROM events e
       WHERE e.subject_values @> ARRAY[${searchable(m)}]::text[] AND e.tombstone IS NULL
             ${m.tenant !== null ? sql`AND e.tenant = ${m.tenant}` : empty}`;

/** The ids of the events a subject names, in id order. */
export async function findSubjectEventIds(db: LedgerDb, m: SubjectMatch): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(db, sql`${matching(m)} ORDER BY e.id`);
  return rows.map((r) => r.id);
}

/**
 * The operational events about these events' deliveries: the ops trigger
 * (migrations 0006, 0008) publishes hookledger.* events whose subject names the
 * eventId and whose payload carries the delivery's last error message, which
 * may echo the erased payload.
 */
export async function findOpsEventIds(db: LedgerDb, eventIds: string[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  // One lookup of the subject keys' GIN index per key. A single `&&` over the chunk's 500 keys was
  // estimated to match a large share of every month, and where the type index cannot serve the LIKE
  // (a server whose collation is not C) PostgreSQL scanned every events row instead: 7 s for 500 ids
  // at 1 M deliveries. Scanning a month once per key is never the cheaper plan (test/retention/erase-plan.test.ts).
  const rows = await queryRows<{ id: string }>(
    db,
    sql`SELECT DISTINCT o.id FROM unnest(${eventIds.map((id) => `eventId:${id}`)}::text[]) AS k(key)
          CROSS JOIN LATERAL (
            -- OFFSET 0 keeps this a lookup per key (unflattened, the join was planned as one scan of every month).
            SELECT e.id FROM events e WHERE e.subject_values @> ARRAY[k.key] AND e.type LIKE 'hookledger.%' AND e.tombstone IS NULL OFFSET 0) o
         ORDER BY o.id`,
  );
  return rows.map((r) => r.id);
}

export type ErasureCounts = { events: number; opsEvents: number; deliveries: number; resolved: number; attempts: number };

/** What tombstoning these events would touch (a dry run): deliveries, those it would resolve, attempts holding an answer. */
export async function countTombstone(db: LedgerDb, eventIds: string[]): Promise<Omit<ErasureCounts, "events" | "opsEvents">> {
  if (eventIds.length === 0) return { deliveries: 0, resolved: 0, attempts: 0 };
  const [r] = await queryRows<{ deliveries: number; resolved: number; attempts: number }>(
    db,
    sql`WITH d AS (SELECT id, state FROM deliveries WHERE event_id = ANY(${eventIds}::text[]))
        SELECT (SELECT count(*) FROM d)::int AS deliveries,
               (SELECT count(*) FROM d WHERE state IN ('pending', 'scheduled', 'in_flight', 'dead_letter'))::int AS resolved,
               (SELECT count(*) FROM attempts a
                 WHERE a.delivery_id = ANY(ARRAY(SELECT id FROM d))
                   AND (a.response_excerpt IS NOT NULL OR a.response_headers IS NOT NULL OR a.error_message IS NOT NULL))::int AS attempts`,
  );
  return r;
}

export type Tombstone = { kind: "erased"; erasureId: string; actor: string; reason: string };

/**
 * Tombstones the given events in one statement (so, inside the caller's
 * transaction, atomically): their payload, subject and searchable values, the
 * answers recorded for their deliveries, and their unfinished deliveries
 * resolved `erased`. Delivery rows are locked in id order first. A worker
 * holding one of them in flight finds its lease gone when it writes the
 * result: the guarded result write (lib/ledger/sql/write-results.ts) matches
 * no row, so the answer, which may echo the payload, is never stored and the
 * row stays resolved. Events already tombstoned are left as they are.
 *
 * Each step names its rows as `= ANY(ARRAY(SELECT …))`, not a join: the
 * planner cannot size a CTE, and joined that way to 10 M deliveries and 30 M
 * attempts the statement ran past the 10 s statement limit (the dashboard10m
 * bench); an array is probed through each table's index whatever the guess.
 */
export async function tombstoneEvents(db: LedgerDb, eventIds: string[], t: Tombstone): Promise<Omit<ErasureCounts, "opsEvents"> & { opsEvents: number }> {
  if (eventIds.length === 0) return { events: 0, opsEvents: 0, deliveries: 0, resolved: 0, attempts: 0 };
  const [r] = await queryRows<ErasureCounts>(
    db,
    sql`WITH ev AS (
          UPDATE events e
             SET payload = ${TOMBSTONE_PAYLOAD}, subject = '{"erased": true}'::jsonb, subject_values = '{}', content_hash = NULL,
                 tombstone = ${t.kind}, tombstoned_at = now(), erasure_id = ${t.erasureId}
           WHERE e.id = ANY(${eventIds}::text[]) AND e.tombstone IS NULL
          RETURNING e.id, e.type),
        o AS (
          SELECT d.id, d.state FROM deliveries d WHERE d.event_id = ANY(ARRAY(SELECT id FROM ev)) ORDER BY d.id FOR UPDATE),
        dl AS (
          UPDATE deliveries d
             SET last_error_message = NULL,
                 state = 'resolved', resolution = 'erased', resolved_at = now(), resolved_by = ${t.actor},
                 resolution_reason = ${`erasure ${t.erasureId}: ${t.reason}`},
                 lease_owner = NULL, lease_until = NULL, leased_at = NULL, next_trigger = 'scheduled', next_actor = NULL, updated_at = now()
           WHERE d.id = ANY(ARRAY(SELECT id FROM o WHERE state IN ('pending', 'scheduled', 'in_flight', 'dead_letter')))
          RETURNING d.id),
        msg AS (
          UPDATE deliveries d SET last_error_message = NULL, updated_at = now()
           WHERE d.id = ANY(ARRAY(SELECT id FROM o WHERE state NOT IN ('pending', 'scheduled', 'in_flight', 'dead_letter'))) AND d.last_error_message IS NOT NULL
          RETURNING d.id),
        att AS (
          UPDATE attempts a SET response_excerpt = NULL, response_headers = NULL, error_message = NULL
           WHERE a.delivery_id = ANY(ARRAY(SELECT id FROM o)) AND (a.response_excerpt IS NOT NULL OR a.response_headers IS NOT NULL OR a.error_message IS NOT NULL)
          RETURNING a.id),
        tst AS (
          UPDATE test_sends t SET response_excerpt = NULL, response_headers = NULL, error_message = NULL
           WHERE t.event_id = ANY(ARRAY(SELECT id FROM ev)) AND (t.response_excerpt IS NOT NULL OR t.response_headers IS NOT NULL OR t.error_message IS NOT NULL)
          RETURNING t.id)
        SELECT (SELECT count(*) FROM ev WHERE type NOT LIKE 'hookledger.%')::int AS events,
               (SELECT count(*) FROM ev WHERE type LIKE 'hookledger.%')::int AS "opsEvents",
               (SELECT count(*) FROM o)::int AS deliveries,
               (SELECT count(*) FROM dl)::int AS resolved,
               (SELECT count(*) FROM att)::int AS attempts,
               (SELECT count(*) FROM msg)::int + (SELECT count(*) FROM tst)::int AS scrubbed`,
  );
  return { events: r.events, opsEvents: r.opsEvents, deliveries: r.deliveries, resolved: r.resolved, attempts: r.attempts };
}

/** What an erasure reports beside its counts: the erased events whose ids contain the value, and the operators' texts it scrubbed. */
export type ErasureTextCounts = { eventIdsWithValue: number; reasonsScrubbed: number };

export type ErasureRow = {
  id: string;
  subjectKey: string;
  tenant: string | null;
  reason: string;
  actor: string;
  status: "running" | "finished";
  startedAt: Date;
  finishedAt: Date | null;
} & ErasureCounts &
  ErasureTextCounts;

const ERASURE_COLUMNS = sql`id, subject_key AS "subjectKey", tenant, reason, actor, status, events_erased AS events, ops_events_erased AS "opsEvents",
  deliveries_erased AS deliveries, deliveries_resolved AS resolved, attempts_scrubbed AS attempts, event_ids_with_value AS "eventIdsWithValue",
  reasons_scrubbed AS "reasonsScrubbed", started_at AS "startedAt", finished_at AS "finishedAt"`;

/**
 * Records an erasure as running (its own short transaction: the record outlives a failure half-way, and a rerun
 * finishes the rest), with the keyed MAC and length of its value (lib/erasure/values.ts), never the value.
 */
export async function insertErasure(
  db: LedgerDb,
  e: { id: string; subjectKey: string; tenant: string | null; reason: string; actor: string; valueMac: Buffer; valueLength: number },
): Promise<ErasureRow> {
  const [r] = await queryRows<ErasureRow>(
    db,
    sql`INSERT INTO erasures (id, subject_key, tenant, reason, actor, value_mac, value_length)
        VALUES (${e.id}, ${e.subjectKey}, ${e.tenant}, ${e.reason}, ${e.actor}, ${e.valueMac}, ${e.valueLength}::int)
        RETURNING ${ERASURE_COLUMNS}`,
  );
  return r;
}

/** Erasures a caller may be told of: a tenant's own and tenant-less ones for a scoped caller (`tenant`), every one for a global caller (null). */
const erasureVisible = (tenant: string | null) => (tenant === null ? sql`true` : sql`(tenant IS NULL OR tenant = ${tenant})`);

/** The lengths of the recorded erased values (lib/erasure/values.ts checks reasons at these lengths only). */
export async function erasedValueLengths(db: LedgerDb, tenant: string | null): Promise<number[]> {
  const rows = await queryRows<{ n: number }>(
    db,
    sql`SELECT DISTINCT value_length AS n FROM erasures WHERE value_mac IS NOT NULL AND ${erasureVisible(tenant)} ORDER BY 1`,
  );
  return rows.map((r) => Number(r.n));
}

/** Whether any of these MACs is a recorded erased value's. */
export async function hasErasedValueMac(db: LedgerDb, macs: Buffer[], tenant: string | null): Promise<boolean> {
  const [r] = await queryRows<{ found: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM erasures WHERE value_mac = ANY(${macs}::bytea[]) AND ${erasureVisible(tenant)}) AS found`,
  );
  return r.found;
}

/**
 * Operators' free text that names the value (`pattern`: lib/erasure/values.ts valuePattern, matched with ~*), in the
 * erasure's tenant and in tenant-less rows (a tenant-less subscription's, a global batch's), or everywhere for an
 * erasure of every tenant: audit reasons and the batch and archive reasons audit details repeat, redrive batch
 * reasons, the resolution reasons of the deliveries those audit rows name (every resolve and supersede writes one per
 * delivery, with its reason), pause and archive reasons, and earlier erasures' reasons. Another tenant's rows are
 * about another district's student of that id and are left alone. With `dryRun`, counted only. Returns the rows
 * changed (or that would be). audit_entries and redrive_batches are read whole, once per erasure: no index serves a
 * word inside free text, and an erasure is rare.
 */
export async function scrubOperatorText(db: LedgerDb, m: { pattern: string; tenant: string | null; replacement: string }, opts: { dryRun: boolean }): Promise<number> {
  const p = m.pattern;
  const rowTenant = (col: "tenant_id" | "tenant") =>
    m.tenant === null ? sql`true` : col === "tenant" ? sql`(tenant IS NULL OR tenant = ${m.tenant})` : sql`(tenant_id IS NULL OR tenant_id = ${m.tenant})`;
  const fix = (col: Sql) => sql`regexp_replace(${col}, ${p}, ${m.replacement}, 'gi')`;
  const auditHit = sql`(reason ~* ${p} OR details->>'batchReason' ~* ${p} OR details->>'archiveReason' ~* ${p}) AND ${rowTenant("tenant_id")}`;
  if (opts.dryRun) {
    const [r] = await queryRows<{ n: number }>(
      db,
      sql`WITH hit AS (SELECT target_type, target_id FROM audit_entries WHERE ${auditHit})
          SELECT ((SELECT count(*) FROM hit)
                + (SELECT count(*) FROM deliveries d WHERE d.id = ANY(ARRAY(SELECT target_id FROM hit WHERE target_type = 'delivery')) AND d.resolution_reason ~* ${p})
                + (SELECT count(*) FROM redrive_batches WHERE reason ~* ${p} AND ${rowTenant("tenant_id")})
                + (SELECT count(*) FROM subscriptions WHERE (state_reason ~* ${p} OR archive_reason ~* ${p}) AND ${rowTenant("tenant")})
                + (SELECT count(*) FROM erasures WHERE reason ~* ${p} AND ${rowTenant("tenant")}))::int AS n`,
    );
    return r.n;
  }
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`WITH hit AS (SELECT id, target_type, target_id FROM audit_entries WHERE ${auditHit} FOR UPDATE),
        dl AS (
          UPDATE deliveries d SET resolution_reason = ${fix(sql`d.resolution_reason`)}, updated_at = now()
           WHERE d.id = ANY(ARRAY(SELECT target_id FROM hit WHERE target_type = 'delivery')) AND d.resolution_reason ~* ${p}
          RETURNING d.id),
        au AS (
          UPDATE audit_entries a
             SET reason = CASE WHEN a.reason ~* ${p} THEN ${fix(sql`a.reason`)} ELSE a.reason END,
                 details = a.details || jsonb_strip_nulls(jsonb_build_object(
                   'batchReason', CASE WHEN a.details->>'batchReason' ~* ${p} THEN ${fix(sql`a.details->>'batchReason'`)} END,
                   'archiveReason', CASE WHEN a.details->>'archiveReason' ~* ${p} THEN ${fix(sql`a.details->>'archiveReason'`)} END))
           WHERE a.id IN (SELECT id FROM hit)
          RETURNING a.id),
        rb AS (
          UPDATE redrive_batches SET reason = ${fix(sql`reason`)} WHERE reason ~* ${p} AND ${rowTenant("tenant_id")} RETURNING id),
        sb AS (
          UPDATE subscriptions
             SET state_reason = CASE WHEN state_reason ~* ${p} THEN ${fix(sql`state_reason`)} ELSE state_reason END,
                 archive_reason = CASE WHEN archive_reason ~* ${p} THEN ${fix(sql`archive_reason`)} ELSE archive_reason END
           WHERE (state_reason ~* ${p} OR archive_reason ~* ${p}) AND ${rowTenant("tenant")}
          RETURNING id),
        er AS (
          UPDATE erasures SET reason = ${fix(sql`reason`)} WHERE reason ~* ${p} AND ${rowTenant("tenant")} RETURNING id)
        SELECT ((SELECT count(*) FROM au) + (SELECT count(*) FROM dl) + (SELECT count(*) FROM rb) + (SELECT count(*) FROM sb) + (SELECT count(*) FROM er))::int AS n`,
  );
  return r.n;
}

/** Adds a chunk's counts to the erasure's row (in the chunk's transaction, so the counts are what committed). */
export async function addErasureCounts(db: LedgerDb, id: string, c: ErasureCounts): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE erasures SET events_erased = events_erased + ${c.events}::int, ops_events_erased = ops_events_erased + ${c.opsEvents}::int,
               deliveries_erased = deliveries_erased + ${c.deliveries}::int, deliveries_resolved = deliveries_resolved + ${c.resolved}::int,
               attempts_scrubbed = attempts_scrubbed + ${c.attempts}::int
         WHERE id = ${id} RETURNING id`,
  );
}

export async function finishErasure(db: LedgerDb, id: string, text: ErasureTextCounts): Promise<ErasureRow> {
  const [r] = await queryRows<ErasureRow>(
    db,
    sql`UPDATE erasures SET status = 'finished', finished_at = now(),
               event_ids_with_value = ${text.eventIdsWithValue}::int, reasons_scrubbed = reasons_scrubbed + ${text.reasonsScrubbed}::int
         WHERE id = ${id} RETURNING ${ERASURE_COLUMNS}`,
  );
  return r;
}

export async function getErasure(db: LedgerDb, id: string): Promise<ErasureRow | null> {
  const [r] = await queryRows<ErasureRow>(db, sql`SELECT ${ERASURE_COLUMNS} FROM erasures WHERE id = ${id}`);
  return r ?? null;
}

/** Whether any subscription or event names this tenant (until tenants have a table of their own): the events_tenant_created index. */
export async function tenantExists(db: LedgerDb, tenant: string): Promise<boolean> {
  const [r] = await queryRows<{ found: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM subscriptions WHERE tenant = ${tenant}) OR EXISTS (SELECT 1 FROM events WHERE tenant = ${tenant}) AS found`,
  );
  return r.found;
}

export type EventTombstone = { tombstone: string; at: Date; erasureId: string | null };

/** The tombstone of a delivery's event, or null for a live event: what the redrive and resend refusals and the timeline say. */
export async function findDeliveryTombstone(db: LedgerDb, deliveryId: string): Promise<EventTombstone | null> {
  const [r] = await queryRows<EventTombstone>(
    db,
    sql`SELECT e.tombstone, e.tombstoned_at AS at, e.erasure_id AS "erasureId"
          FROM deliveries d JOIN events e ON e.id = d.event_id AND e.created_at = d.event_at
         WHERE d.id = ${deliveryId} AND e.tombstone IS NOT NULL`,
  );
  return r ?? null;
}

/** Tombstones of stored events by id (the republish refusal). */
export async function findEventTombstones(db: LedgerDb, eventIds: string[]): Promise<Map<string, EventTombstone>> {
  const out = new Map<string, EventTombstone>();
  if (eventIds.length === 0) return out;
  const rows = await queryRows<EventTombstone & { id: string }>(
    db,
    sql`SELECT id, tombstone, tombstoned_at AS at, erasure_id AS "erasureId" FROM events WHERE id = ANY(${eventIds}::text[]) AND tombstone IS NOT NULL`,
  );
  for (const r of rows) out.set(r.id, { tombstone: r.tombstone, at: r.at, erasureId: r.erasureId });
  return out;
}

/** The refusal's sentence for a tombstoned event: "its payload was erased by erasure er_… on …". */
export function tombstoneSentence(t: EventTombstone): string {
  const on = new Date(t.at).toISOString();
  return t.tombstone === "erased" ? `its payload was erased by erasure ${t.erasureId} on ${on}` : `its payload was ${t.tombstone} on ${on}`;
}
