// The transactional outbox (invariant 2): one transaction writes the event and
// one delivery per matching subscription. A producer calls publishEvent inside
// its own transaction (a Prisma interactive transaction, or a pg client after
// BEGIN); if that transaction rolls back, nothing remains.
import "server-only";
import { Prisma } from "../generated/prisma/client";
import type { PrismaClient } from "../db/prisma";
import { AppError, fromZod } from "../errors";
import type { LedgerDb } from "../ledger/read/db";
import { enqueueEvents, existingDeliveries, type EnqueuedDelivery, type EventRow, type ExistingEvent, type SubscriptionTenants } from "../ledger/sql/enqueue";
import { tombstoneSentence } from "../ledger/sql/erase";
import type { Scope } from "../tenants/scope";
import { eventContentHash } from "./canonical";
import { ZCreateEvent, type TCreateEvent } from "./event-input";
import { schemaRefusalIn } from "../catalog/publish-check";

export type PublishedDelivery = EnqueuedDelivery;
export type { EventRow };
export type PublishResult = {
  eventId: string;
  created: boolean;
  deliveries: PublishedDelivery[];
  /** The HTTP ingest's: each delivery's subscription tenant, for visibleDeliveries. Never part of an answer. */
  subscriptionTenants?: SubscriptionTenants;
};

/**
 * The deliveries of a publish answer that `scope` may see. A scoped producer's event also reaches tenant-less
 * subscriptions (they receive every tenant's events); their delivery ids and keys are not its to know, so its answer
 * lists its own tenant's subscriptions' deliveries only. An in-memory filter over the tenants the enqueue statement
 * returned with the rows: no query. A result without them (publishEvent's) shows a scoped caller nothing.
 */
export function visibleDeliveries(r: PublishResult, scope: Scope): PublishedDelivery[] {
  if (scope.tenantId === null) return r.deliveries;
  const tenants = r.subscriptionTenants;
  return tenants ? r.deliveries.filter((d) => tenants.get(d.subscriptionId) === scope.tenantId) : [];
}

/**
 * A republish refusal as a scoped producer is told it. The stored type and the erasure belong to whoever published
 * the id first, possibly another tenant, and a scoped producer cannot tell whose from the answer: every conflict and
 * erased id is the same 409, so its own conflicts and another tenant's ids read alike. Other errors pass unchanged.
 */
export function refusalFor(scope: Scope, err: unknown): unknown {
  if (scope.tenantId === null || !(err instanceof AppError) || (err.code !== "event_conflict" && err.code !== "event_erased")) return err;
  const id = String((err.details as { eventId?: unknown } | undefined)?.eventId ?? "");
  return new AppError(
    "event_conflict",
    `Event ${id} cannot be published with this content: the id is already taken, and an event id names one event. Publish under a new id.`,
    { eventId: id },
  );
}

/** The bytes every receiver gets for this event: serialised once, stored, never re-serialised. */
export function envelopeBytes(event: TCreateEvent, occurredAt: Date): Buffer {
  return Buffer.from(JSON.stringify({ id: event.id, type: event.type, timestamp: occurredAt.toISOString(), data: event.data }), "utf8");
}

export function subjectValues(subject: Record<string, string | number>): string[] {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(subject)) {
    out.add(String(v));
    out.add(`${k}:${v}`);
  }
  return [...out];
}

/** The events row for a validated event, as publishEvent and the grouped ingest (./ingest.ts) both enqueue it. */
export function eventRow(event: TCreateEvent): EventRow {
  const occurredAt = event.occurredAt ? new Date(event.occurredAt) : new Date();
  const subject = event.subject ?? {};
  return {
    id: event.id,
    type: event.type,
    payload: envelopeBytes(event, occurredAt),
    occurredAt,
    tenant: subject.tenant !== undefined ? String(subject.tenant) : null,
    subject: JSON.stringify(subject),
    subjectValues: subjectValues(subject),
    contentHash: eventContentHash(event),
  };
}

/**
 * The 409 for an id already published with other content. A corrected event
 * republished under its old id would otherwise be answered 200 with the old
 * deliveries, and the correction would never reach anyone.
 */
export function eventConflict(id: string, storedType: string): AppError {
  return new AppError(
    "event_conflict",
    `Event ${id} was already published with different content (type ${storedType}); an event id names one event. Publish the correction under a new id.`,
    { eventId: id },
  );
}

/**
 * Whether `row` republishes `stored` with other content: the content hashes
 * differ, or, for an event stored before hashes were kept (hash unknown), the
 * types do.
 */
export function isChangedRepublish(row: Pick<EventRow, "type" | "contentHash">, stored: { type: string; contentHash?: Buffer | null }): boolean {
  if (row.type !== stored.type) return true;
  if (!stored.contentHash || !row.contentHash) return false;
  return !row.contentHash.equals(stored.contentHash);
}

/**
 * Why a republish of a stored event is refused, or null when it is answered as a duplicate. An erased event's id stays
 * taken: answering 200 would hand back deliveries that can never be sent, and accepting new content would bring the
 * erased subject back under the same id.
 */
export function republishRefusal(id: string, row: Pick<EventRow, "type" | "contentHash">, stored: ExistingEvent): AppError | null {
  if (stored.tombstone)
    return new AppError("event_erased", `Event ${id} cannot be published again: ${tombstoneSentence(stored.tombstone)}. Publish new data under a new id.`, {
      eventId: id,
      erasureId: stored.tombstone.erasureId,
    });
  return isChangedRepublish(row, stored) ? eventConflict(id, stored.type) : null;
}

/** `db`: the producer's transaction, whose commit or rollback the event and its deliveries follow. */
export async function publishEvent(db: LedgerDb, input: TCreateEvent): Promise<PublishResult> {
  const parsed = ZCreateEvent.safeParse(input);
  if (!parsed.success) throw fromZod(parsed.error);
  const event = parsed.data;
  // The type's schema as this transaction sees the catalog: a mismatch is thrown before anything is written.
  const mismatch = await schemaRefusalIn(db, event);
  if (mismatch) throw mismatch;
  const row = eventRow(event);

  // Paused and disabled subscriptions get their deliveries too: held, never dropped
  // (invariant 7); the matching is hl_enqueue_events's (lib/ledger/sql/enqueue.ts).
  // An id already stored is absent from the enqueue's answer.
  const deliveries = (await enqueueEvents(db, [row])).get(event.id);
  if (deliveries) return { eventId: event.id, created: true, deliveries };
  const existing = (await existingDeliveries(db, [event.id])).get(event.id) ?? null;
  const refusal = existing && republishRefusal(event.id, row, existing);
  if (refusal) throw refusal;
  return { eventId: event.id, created: false, deliveries: existing?.deliveries ?? [] };
}

/** publishEvent in a transaction of its own. A concurrent duplicate resolves to the existing deliveries. */
export async function publishEventStandalone(prisma: PrismaClient, input: TCreateEvent): Promise<PublishResult> {
  try {
    return await prisma.$transaction((tx) => publishEvent(tx, input));
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError || /unique|duplicate key/i.test(String((err as Error).message))) {
      return prisma.$transaction((tx) => publishEvent(tx, input));
    }
    throw err;
  }
}
