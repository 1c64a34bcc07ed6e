// The HTTP ingest path (POST /api/v1/events): group commit over the raw pg pool.
//
// Each request's event is validated first (bad input is a 4xx that changes
// nothing and never joins a group). Events that arrive while a write is in
// flight wait for a free slot and are then written together: ONE autocommit
// statement (lib/ledger/sql/enqueue.ts, the SQL function hl_enqueue_events)
// inserts the events and their deliveries; once it has committed, the workers
// are woken (a NOTIFY of its own: migration 0027). The statement is atomic, so every event of a group is committed or none
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
import "server-only";
import type pg from "pg";
import { getPool } from "../db/pool";
import { AppError } from "../errors";
import { isRetryableTransactionError } from "../db/retry";
import { enqueueEventsWithTenants, existingDeliveries, wakeWorkers, type EventRow, type ExistingEvent, type SubscriptionTenants } from "../ledger/sql/enqueue";
import { logger } from "../log";
import { eventConflict, eventRow, isChangedRepublish, republishRefusal, type PublishedDelivery, type PublishResult } from "./publish";
import type { TCreateEvent } from "./event-input";

/**
 * Statements in flight at once for full groups (batches). Two left a fifth of the machine idle: two
 * statements inserting at the same right-hand index pages wait on each other's page locks, and a
 * group's commit waits for its flush, so a third statement has work to do meanwhile. Batches of 500
 * through server.ts, runs alternated (BENCHMARKS.md F5): with three 9,692-11,295 events/s and 1.82-1.88 of 2 cores busy, with two
 * 8,145-10,319/s and 1.69-1.76 cores.
 */
const MAX_IN_FLIGHT = 3;
/**
 * More statements may start while the group is small (at most SMALL_GROUP events): single publishes
 * form groups of about ten events whose time is mostly the commit's flush, not execution. Since the
 * groups' commits no longer hold the notify lock (migration 0027) they can share a flush, and a
 * fourth statement helps: single publishes through server.ts, 32 concurrent, runs alternated
 * (BENCHMARKS.md F5): with three 2,535, 2,419,
 * 1,857, 1,806/s, with four 2,783, 2,713, 1,945, 1,978/s, with six no better than four.
 */
const MAX_IN_FLIGHT_SMALL = 4;
const SMALL_GROUP = 64;
/** Events per statement at most (a group is whatever arrived during the previous write, up to this). */
const MAX_GROUP = 256;

/** `tenants`: the caller is a scoped producer, whose answer needs each delivery's subscription tenant (publish.ts visibleDeliveries). */
type Waiter = { row: EventRow; tenants: boolean; resolve: (r: PublishResult) => void; reject: (e: unknown) => void };

/**
 * Writes a group and answers each waiter. Events with the same id in one group:
 * the first is written, the others answer as a republish of it would.
 */
async function writeGroup(pool: pg.Pool, waiters: Waiter[], wake: () => void, attempt = 0): Promise<void> {
  const leaders = new Map<string, Waiter[]>();
  for (const w of waiters) {
    const same = leaders.get(w.row.id);
    if (same) same.push(w);
    else leaders.set(w.row.id, [w]);
  }
  const rows = [...leaders.values()].map((ws) => ws[0].row);
  let created: Map<string, PublishedDelivery[]>;
  let tenants: SubscriptionTenants;
  try {
    // One statement, so one commit: the group's events and deliveries, by event id.
    ({ byEvent: created, tenants } = await enqueueEventsWithTenants(pool, rows, null, { wake: false, withTenants: waiters.some((w) => w.tenants) }));
  } catch (err) {
    const code = (err as { code?: string }).code ?? "";
    if (rows.length > 1) {
      // Nothing of the group was written. Each event again, alone: a bad row fails only its own caller.
      await Promise.all([...leaders.values()].map((ws) => writeGroup(pool, ws, wake, attempt)));
      return;
    }
    // A lost deadlock (against a worker's write on the same subscription rows) left nothing: the event again.
    if (isRetryableTransactionError(err) && attempt < 3) return writeGroup(pool, waiters, wake, attempt + 1);
    // A data exception (SQLSTATE class 22) on input that passed validation is still the caller's input.
    const failure = code.startsWith("22") ? new AppError("validation_failed", `The event could not be stored: ${(err as Error).message}`) : err;
    for (const w of waiters) w.reject(failure);
    return;
  }

  // Committed: wake the workers (sent now, not awaited: the answers do not wait for it).
  if ([...created.values()].some((d) => d.length > 0)) wake();
  const missing: string[] = [];
  for (const [id, ws] of leaders) {
    const deliveries = created.get(id);
    if (!deliveries) {
      missing.push(id);
      continue;
    }
    ws[0].resolve({ eventId: id, created: true, deliveries, subscriptionTenants: tenants });
    for (const w of ws.slice(1)) {
      if (isChangedRepublish(w.row, ws[0].row)) w.reject(eventConflict(id, ws[0].row.type));
      else w.resolve({ eventId: id, created: false, deliveries: deliveries.map((d) => ({ ...d })), subscriptionTenants: tenants });
    }
  }
  if (missing.length === 0) return;

  // Already published (by an earlier request, or by a group that committed first).
  let found: Map<string, ExistingEvent>;
  try {
    found = await existingDeliveries(pool, missing);
  } catch (err) {
    for (const id of missing) for (const w of leaders.get(id)!) w.reject(err);
    return;
  }
  const retry: Waiter[] = [];
  for (const id of missing) {
    const prior = found.get(id);
    for (const w of leaders.get(id)!) {
      const refusal = prior && republishRefusal(id, w.row, prior);
      if (prior === undefined)
        retry.push(w); // the conflicting row is gone again: retention removed that (expired) event in between
      else if (refusal) w.reject(refusal);
      else w.resolve({ eventId: id, created: false, deliveries: prior.deliveries.map((d) => ({ ...d })), subscriptionTenants: prior.subscriptionTenants });
    }
  }
  if (retry.length) {
    if (attempt < 3) await writeGroup(pool, retry, wake, attempt + 1);
    else for (const w of retry) w.reject(new AppError("unavailable", "The event could not be published; try again."));
  }
}

/**
 * The workers' wake after grouped commits (migration 0027): one `send` at a
 * time; a group that commits while one is in flight asks for one more, so a
 * wake always follows the last commit. A failed wake is only logged: the
 * deliveries are committed, and the workers poll (HOOKLEDGER_WORKER_POLL_MS).
 */
export class Waker {
  private running = false;
  private again = false;

  constructor(private readonly send: () => Promise<void>) {}

  wake = () => {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.loop();
  };

  private async loop() {
    do {
      this.again = false;
      try {
        await this.send();
      } catch (err) {
        logger.warn({ err: (err as Error).message }, "ingest: could not wake the workers; they will find the deliveries at their next poll");
      }
    } while (this.again);
    this.running = false;
  }
}

/** Coalesces concurrent publishes into grouped statements; see the file comment. */
export class GroupPublisher {
  private queue: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly waker: Waker;

  constructor(private readonly pool: () => pg.Pool = getPool) {
    this.waker = new Waker(() => wakeWorkers(pool()));
  }

  publish(event: TCreateEvent, tenants = false): Promise<PublishResult> {
    const row = eventRow(event);
    return new Promise<PublishResult>((resolve, reject) => {
      this.queue.push({ row, tenants, resolve, reject });
      // Requests parsed in the same turn of the event loop go out together.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.pump());
      }
    });
  }

  private pump() {
    this.scheduled = false;
    while (this.queue.length > 0 && this.inFlight < (this.queue.length <= SMALL_GROUP ? MAX_IN_FLIGHT_SMALL : MAX_IN_FLIGHT)) {
      const group = this.queue.splice(0, MAX_GROUP);
      this.inFlight++;
      writeGroup(this.pool(), group, this.waker.wake)
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
 * id already published with the same content, `created: false` and the existing
 * deliveries; other content is a 409 event_conflict. With `subscriptionTenants` (a scoped producer's publish) the
 * result also names each delivery's subscription tenant, for visibleDeliveries.
 */
export function ingestEvent(event: TCreateEvent, opts: { subscriptionTenants?: boolean } = {}): Promise<PublishResult> {
  if (!g.__hookledgerIngest) g.__hookledgerIngest = new GroupPublisher();
  return g.__hookledgerIngest.publish(event, opts.subscriptionTenants ?? false);
}
