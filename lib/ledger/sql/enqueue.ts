// Enqueueing: new events and one delivery per matching subscription, through
// the one SQL function hl_enqueue_events (migrations 0011 to 0033), which derives the
// delivery keys (hl_delivery_key), matches subscriptions (type, '*', tenant),
// inserts the rows and NOTIFYs the workers. One statement for every caller, on
// whatever connection it holds (LedgerDb): the HTTP ingest's group commit
// (lib/events/ingest.ts: many events, a pooled pg connection), publishEvent
// inside a producer's own transaction (lib/events/publish.ts), the
// operational-event trigger (in SQL), and the test and bench seeders (./seed.ts).
import "server-only";
import type pg from "pg";
import { queryRows, type LedgerDb } from "../read/db";
import type { EventTombstone } from "./erase";
import { DELIVERIES_CHANNEL } from "../notify";

/** The events row for a validated event, as the enqueue stores it. */
export type EventRow = {
  id: string;
  type: string;
  /** The envelope bytes every receiver gets, stored once, never re-serialised (invariant 10). */
  payload: Buffer;
  occurredAt: Date;
  tenant: string | null;
  /** The subject as JSON text. */
  subject: string;
  subjectValues: string[];
  /** sha256 of the canonical type, data and subject (lib/events/canonical.ts); compared when the id is published again. */
  contentHash?: Buffer | null;
};

export type EnqueuedDelivery = { id: string; subscriptionId: string; deliveryKey: string };

/**
 * The tenant of each subscription a statement wrote (or found) deliveries for, as the statement read it (null:
 * tenant-less). Not part of a delivery's shape: a publish answer lists only the deliveries its caller may see
 * (lib/events/publish.ts visibleDeliveries), and filtering by this costs no query.
 */
export type SubscriptionTenants = ReadonlyMap<string, string | null>;

type OutRow = { event_id: string; id: string | null; subscription_id: string | null; delivery_key: string | null; subscription_tenant?: string | null };

/**
 * The rows as the function's parallel arrays ($1..$9: ids, types, no payload array, times, tenants, subjects, subject
 * values, their from/to), then the payloads packed end to end with each one's end offset, and the 32-byte content
 * hashes packed (null when a row has none: then the hash array). Buffers go to PostgreSQL as binary parameters, where a
 * bytea[] goes as hex inside a text array literal (migration 0033).
 */
function columns(rows: EventRow[]) {
  const cols: [string[], string[], null, string[], (string | null)[], string[], string[], number[], number[]] = [[], [], null, [], [], [], [], [], []];
  const payloadEnds: number[] = [];
  let end = 0;
  let packedHashes = true;
  for (const r of rows) {
    cols[0].push(r.id);
    cols[1].push(r.type);
    end += r.payload.length;
    payloadEnds.push(end);
    // As text: the driver's own Date formatting (local time, field by field) cost more than the rest of the row's encoding.
    cols[3].push(r.occurredAt.toISOString());
    cols[4].push(r.tenant);
    cols[5].push(r.subject);
    cols[7].push(cols[6].length + 1);
    for (const v of r.subjectValues) cols[6].push(v);
    cols[8].push(cols[6].length);
    if (r.contentHash?.length !== 32) packedHashes = false;
  }
  const payloadBlob = Buffer.concat(
    rows.map((r) => r.payload),
    end,
  );
  const hashes = packedHashes ? null : rows.map((r) => r.contentHash ?? null);
  const hashBlob = packedHashes ? Buffer.concat(rows.map((r) => r.contentHash!)) : null;
  return { cols, hashes, payloadBlob, payloadEnds, hashBlob };
}

const ENQUEUE_CALL = `hl_enqueue_events($1::text[], $2::text[], $3::bytea[], $4::timestamptz[], $5::text[], $6::jsonb[], $7::text[], $8::int[], $9::int[], $10::text[], $11::bytea[], $12::boolean,
                         $13::bytea, $14::int[], $15::bytea)`;
const ENQUEUE = `SELECT event_id, delivery_id AS id, subscription_id, delivery_key FROM ${ENQUEUE_CALL}`;
// For a group with a scoped producer in it: each delivery's subscription tenant, joined to the function's rows in the
// same statement (and snapshot) that matched them. Only then: the join costs Postgres 10 to 20 µs an event (about a
// tenth of its time; bench/db-ingest.ts, 3 and 10,003 subscriptions), which the SaaS's own global producers, who
// publish nearly everything, do not pay.
const ENQUEUE_WITH_TENANTS = `SELECT x.event_id, x.delivery_id AS id, x.subscription_id, x.delivery_key, s.tenant AS subscription_tenant
  FROM ${ENQUEUE_CALL} x LEFT JOIN subscriptions s ON s.id = x.subscription_id`;

/** Deliveries per event id, each list in subscription-id order. */
function byEvent(rows: OutRow[]): Map<string, EnqueuedDelivery[]> {
  const out = new Map<string, EnqueuedDelivery[]>();
  for (const r of rows) {
    let list = out.get(r.event_id);
    if (!list) out.set(r.event_id, (list = []));
    if (r.id) list.push({ id: r.id, subscriptionId: r.subscription_id!, deliveryKey: r.delivery_key! });
  }
  for (const list of out.values()) list.sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : 0));
  return out;
}

function tenantsOf(rows: OutRow[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const r of rows) if (r.subscription_id) out.set(r.subscription_id, r.subscription_tenant ?? null);
  return out;
}

/**
 * Enqueues `rows` in one statement (so one transaction when autocommitted):
 * the events written and their deliveries, by event id. An event whose id was
 * already stored is absent from the map (see existingDeliveries).
 * `onlySubscriptions` restricts the matching (tests and benches). With
 * `wake: false` the statement does not NOTIFY the workers: the caller calls
 * wakeWorkers after the commit (migration 0027 says why).
 */
export async function enqueueEvents(
  db: LedgerDb,
  rows: EventRow[],
  onlySubscriptions: string[] | null = null,
  opts: { wake?: boolean } = {},
): Promise<Map<string, EnqueuedDelivery[]>> {
  return (await enqueueEventsWithTenants(db, rows, onlySubscriptions, opts)).byEvent;
}

/**
 * enqueueEvents, and with `withTenants` the tenant of every subscription it wrote deliveries for (the HTTP ingest
 * filters a scoped producer's answer by it); without, `tenants` is empty.
 */
export async function enqueueEventsWithTenants(
  db: LedgerDb,
  rows: EventRow[],
  onlySubscriptions: string[] | null = null,
  opts: { wake?: boolean; withTenants?: boolean } = {},
): Promise<{ byEvent: Map<string, EnqueuedDelivery[]>; tenants: SubscriptionTenants }> {
  // A named statement: parsed and planned once per pg connection.
  const { cols, hashes, payloadBlob, payloadEnds, hashBlob } = columns(rows);
  const out = await queryRows<OutRow>(db, {
    name: opts.withTenants ? "hl_enqueue_tenants_v1" : "hl_enqueue_v5",
    text: opts.withTenants ? ENQUEUE_WITH_TENANTS : ENQUEUE,
    values: [...cols, onlySubscriptions, hashes, opts.wake ?? true, payloadBlob, payloadEnds, hashBlob],
  });
  return { byEvent: byEvent(out), tenants: tenantsOf(out) };
}

/**
 * Wakes the workers for deliveries already committed. Its own transaction
 * commits without waiting for a WAL flush (synchronous_commit off for it
 * alone): it writes nothing a crash could lose but the wake, and it holds the
 * notify lock only for as long as it runs.
 */
export async function wakeWorkers(db: pg.Pool | pg.PoolClient): Promise<void> {
  await db.query({ name: "hl_wake_v1", text: "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')", values: [DELIVERIES_CHANNEL] });
}

type ExistingRow = OutRow & { type: string; content_hash: Buffer | null; tombstone: string | null; tombstoned_at: Date | null; erasure_id: string | null };

/**
 * An event already stored under an id: its type, content hash (null for events stored before hashes were kept, and for
 * tombstones), deliveries, and its tombstone when its payload was erased (./erase.ts), which a republish may not revive.
 */
export type ExistingEvent = {
  type: string;
  contentHash: Buffer | null;
  deliveries: EnqueuedDelivery[];
  tombstone: EventTombstone | null;
  /** The tenant of each of those deliveries' subscriptions (see SubscriptionTenants). */
  subscriptionTenants: SubscriptionTenants;
};

// After the insert, in a statement of its own: a conflicting event committed by
// another transaction is visible only to a new snapshot.
const SELECT_EXISTING = `
SELECT e.id AS event_id, e.type, e.content_hash, e.tombstone, e.tombstoned_at, e.erasure_id, d.id, d.subscription_id, d.delivery_key, s.tenant AS subscription_tenant
FROM events e LEFT JOIN deliveries d ON d.event_id = e.id AND d.event_at = e.created_at LEFT JOIN subscriptions s ON s.id = d.subscription_id
WHERE e.id = ANY($1::text[])`;

/** Events already stored under these ids: each one's type and deliveries (subscription-id order). */
export async function existingDeliveries(db: LedgerDb, ids: string[]): Promise<Map<string, ExistingEvent>> {
  return existing(await queryRows<ExistingRow>(db, { name: "hl_enqueue_existing_v4", text: SELECT_EXISTING, values: [ids] }));
}

function existing(rows: ExistingRow[]) {
  const heads = new Map(rows.map((r) => [r.event_id, r]));
  const found = byEvent(rows);
  // A subscription's tenant does not depend on the event: one map serves every event here.
  const tenants = tenantsOf(rows);
  const out = new Map<string, ExistingEvent>();
  for (const [id, r] of heads)
    out.set(id, {
      type: r.type,
      contentHash: r.content_hash,
      deliveries: found.get(id)!,
      tombstone: r.tombstone ? { tombstone: r.tombstone, at: r.tombstoned_at!, erasureId: r.erasure_id } : null,
      subscriptionTenants: tenants,
    });
  return out;
}
