// The HTTP ingest path (POST /api/v1/events): group commit over the raw pg pool.
//
// Each request's event is validated first (bad input is a 4xx that changes
// nothing and never joins a group). Events that arrive while a write is in
// flight wait for a free slot and are then written together: ONE autocommit
// statement inserts the events and their deliveries and NOTIFYs the workers
// once. The statement is atomic, so every event of a group is committed or none
// is (invariant 2: an event and all its deliveries in one transaction), and each
// caller is answered only after the commit that holds its rows.
//
// Why (BENCHMARKS.md F5): one Prisma interactive transaction per event was
// seven round trips and one fsync'd commit per event, and every commit that
// has called NOTIFY takes PostgreSQL's notify lock and holds it through its WAL
// flush, so those commits cannot share a flush. Measured DB-only on the bench
// machine, 32 concurrent publishers: one statement per event 582–607/s with
// NOTIFY, 838–851/s without; the grouped statement 2,100–2,450/s either way.
//
// If a group's statement fails, nothing of it was written; its events are then
// retried one statement each, so a single bad row (or a lost deadlock race)
// fails only its own caller. Producers publishing inside their own transaction
// use publishEvent (./publish.ts) instead; both write the same rows.
import type pg from "pg";
import { getPool } from "../db/pool";
import { AppError } from "../errors";
import { alreadyPublished, eventRow, type EventRow, type PublishedDelivery, type PublishResult } from "./publish";
import type { TCreateEvent } from "./schema";

/** Statements in flight at once. Two keep PostgreSQL's two cores busy: one group executes while the other waits for its flush. */
const MAX_IN_FLIGHT = 2;
/** Events per statement at most (a group is whatever arrived during the previous write, up to this). */
const MAX_GROUP = 256;

type Waiter = { row: EventRow; resolve: (r: PublishResult) => void; reject: (e: unknown) => void };

// Ordered by id so that two groups racing on the same ids take their unique-index
// locks in the same order (no deadlock between groups).
const INSERT_GROUP = `
WITH inp AS (
  SELECT i.id, i.type, i.payload, i.occurred_at, i.tenant, i.subject, ($7::text[])[i.sv_from:i.sv_to] AS subject_values
  FROM unnest($1::text[], $2::text[], $3::bytea[], $4::timestamptz[], $5::text[], $6::jsonb[], $8::int[], $9::int[])
       AS i(id, type, payload, occurred_at, tenant, subject, sv_from, sv_to)
), ev AS (
  INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
  SELECT id, type, payload, occurred_at, tenant, subject, coalesce(subject_values, '{}') FROM inp ORDER BY id
  ON CONFLICT (id) DO NOTHING
  RETURNING id, type, tenant
), dl AS (
  -- Paused and disabled subscriptions get their deliveries too: held, never
  -- dropped (invariant 7). A subscription with a tenant receives only that tenant's events.
  INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
  SELECT encode(sha256(convert_to(s.id || ':' || ev.id, 'UTF8')), 'hex'), ev.id, s.id, ev.type
  FROM ev JOIN subscriptions s
    ON (s.event_types @> ARRAY[ev.type] OR s.event_types @> ARRAY['*']::text[])
   AND (s.tenant IS NULL OR s.tenant = ev.tenant)
  ORDER BY ev.id, s.id
  RETURNING id, event_id, subscription_id, delivery_key
)
SELECT ev.id AS event_id, dl.id, dl.subscription_id, dl.delivery_key,
       -- one NOTIFY per group (evaluated once), and none when nothing was enqueued
       (SELECT pg_notify('hookledger_deliveries', '') WHERE EXISTS (SELECT 1 FROM dl)) AS notify
FROM ev LEFT JOIN dl ON dl.event_id = ev.id`;

// After the insert, in a statement of its own: a conflicting event committed by
// another transaction is visible only to a new snapshot.
const SELECT_EXISTING = `
SELECT e.id AS event_id, e.type, d.id, d.subscription_id, d.delivery_key
FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
WHERE e.id = ANY($1::text[])`;

type OutRow = { event_id: string; id: string | null; subscription_id: string | null; delivery_key: string | null };

function byEvent(rows: OutRow[]): Map<string, PublishedDelivery[]> {
  const out = new Map<string, PublishedDelivery[]>();
  for (const r of rows) {
    let list = out.get(r.event_id);
    if (!list) out.set(r.event_id, (list = []));
    if (r.id) list.push({ id: r.id, subscriptionId: r.subscription_id!, deliveryKey: r.delivery_key! });
  }
  for (const list of out.values()) list.sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : 0));
  return out;
}

const RETRYABLE = new Set(["40P01", "40001"]); // deadlock, serialization failure

/** The event ids of `group` written, and their deliveries, with one statement (one commit). */
async function insertGroup(pool: pg.Pool, group: EventRow[]): Promise<Map<string, PublishedDelivery[]>> {
  const cols: [string[], string[], Buffer[], Date[], (string | null)[], string[], string[], number[], number[]] = [[], [], [], [], [], [], [], [], []];
  for (const r of group) {
    cols[0].push(r.id);
    cols[1].push(r.type);
    cols[2].push(r.payload);
    cols[3].push(r.occurredAt);
    cols[4].push(r.tenant);
    cols[5].push(r.subject);
    cols[7].push(cols[6].length + 1);
    for (const v of r.subjectValues) cols[6].push(v);
    cols[8].push(cols[6].length);
  }
  const { rows } = await pool.query<OutRow>({ name: "hl_ingest_group_v1", text: INSERT_GROUP, values: cols });
  return byEvent(rows);
}

/**
 * Writes a group and answers each waiter. Events with the same id in one group:
 * the first is written, the others answer as a republish of it would.
 */
async function writeGroup(pool: pg.Pool, waiters: Waiter[], attempt = 0): Promise<void> {
  const leaders = new Map<string, Waiter[]>();
  for (const w of waiters) {
    const same = leaders.get(w.row.id);
    if (same) same.push(w);
    else leaders.set(w.row.id, [w]);
  }
  const rows = [...leaders.values()].map((ws) => ws[0].row);
  let created: Map<string, PublishedDelivery[]>;
  try {
    created = await insertGroup(pool, rows);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "";
    if (rows.length > 1) {
      // Nothing of the group was written. Each event again, alone: a bad row fails only its own caller.
      await Promise.all([...leaders.values()].map((ws) => writeGroup(pool, ws, attempt)));
      return;
    }
    if (RETRYABLE.has(code) && attempt < 3) return writeGroup(pool, waiters, attempt + 1);
    // A data exception (SQLSTATE class 22) on input that passed validation is still the caller's input.
    const failure = code.startsWith("22") ? new AppError("validation_failed", `The event could not be stored: ${(err as Error).message}`) : err;
    for (const w of waiters) w.reject(failure);
    return;
  }

  const missing: string[] = [];
  for (const [id, ws] of leaders) {
    const deliveries = created.get(id);
    if (!deliveries) {
      missing.push(id);
      continue;
    }
    ws[0].resolve({ eventId: id, created: true, deliveries });
    for (const w of ws.slice(1)) {
      if (w.row.type !== ws[0].row.type) w.reject(alreadyPublished(id, ws[0].row.type));
      else w.resolve({ eventId: id, created: false, deliveries: deliveries.map((d) => ({ ...d })) });
    }
  }
  if (missing.length === 0) return;

  // Already published (by an earlier request, or by a group that committed first).
  let existing: { rows: (OutRow & { type: string })[] };
  try {
    existing = await pool.query<OutRow & { type: string }>({ name: "hl_ingest_existing_v1", text: SELECT_EXISTING, values: [missing] });
  } catch (err) {
    for (const id of missing) for (const w of leaders.get(id)!) w.reject(err);
    return;
  }
  const types = new Map(existing.rows.map((r) => [r.event_id, r.type]));
  const found = byEvent(existing.rows);
  const retry: Waiter[] = [];
  for (const id of missing) {
    const type = types.get(id);
    for (const w of leaders.get(id)!) {
      if (type === undefined) retry.push(w); // the conflicting row is gone again (cannot happen today: events are never deleted)
      else if (type !== w.row.type) w.reject(alreadyPublished(id, type));
      else w.resolve({ eventId: id, created: false, deliveries: found.get(id)!.map((d) => ({ ...d })) });
    }
  }
  if (retry.length) {
    if (attempt < 3) await writeGroup(pool, retry, attempt + 1);
    else for (const w of retry) w.reject(new AppError("unavailable", "The event could not be published; try again."));
  }
}

/** Coalesces concurrent publishes into grouped statements; see the file comment. */
export class GroupPublisher {
  private queue: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly pool: () => pg.Pool = getPool) {}

  publish(event: TCreateEvent): Promise<PublishResult> {
    const row = eventRow(event);
    return new Promise<PublishResult>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      // Requests parsed in the same turn of the event loop go out together.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.pump());
      }
    });
  }

  private pump() {
    this.scheduled = false;
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      this.inFlight++;
      writeGroup(this.pool(), group)
        .catch((err) => {
          for (const w of group) w.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}

const g = globalThis as unknown as { __hookledgerIngest?: GroupPublisher };

/**
 * Publishes one validated event in a transaction of its own (grouped with
 * concurrent ones): 202-style `created: true` with its deliveries, or, for an
 * id already published with the same type, `created: false` and the existing
 * deliveries; a different type is a 409.
 */
export function ingestEvent(event: TCreateEvent): Promise<PublishResult> {
  if (!g.__hookledgerIngest) g.__hookledgerIngest = new GroupPublisher();
  return g.__hookledgerIngest.publish(event);
}
