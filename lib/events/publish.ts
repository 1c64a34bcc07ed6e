// The transactional outbox (invariant 2): one transaction writes the event and
// one delivery per matching subscription. A producer calls publishEvent inside
// its own Prisma transaction; if that transaction rolls back, nothing remains.
import { Prisma } from "../generated/prisma/client";
import type { PrismaClient, Tx } from "../db/prisma";
import { AppError, fromZod } from "../errors";
import { ZCreateEvent, type TCreateEvent } from "./schema";

export type PublishedDelivery = { id: string; subscriptionId: string; deliveryKey: string };
export type PublishResult = { eventId: string; created: boolean; deliveries: PublishedDelivery[] };

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

/** The events row for a validated event, as publishEvent and the grouped ingest (./ingest.ts) both store it. */
export type EventRow = {
  id: string;
  type: string;
  payload: Buffer;
  occurredAt: Date;
  tenant: string | null;
  /** The subject as JSON text. */
  subject: string;
  subjectValues: string[];
};

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
  };
}

/** The 409 for an id already published with another type. */
export function alreadyPublished(id: string, type: string): AppError {
  return new AppError("conflict", `Event ${id} was already published with type ${type}; event ids are unique.`);
}

export async function publishEvent(tx: Tx, input: TCreateEvent): Promise<PublishResult> {
  const parsed = ZCreateEvent.safeParse(input);
  if (!parsed.success) throw fromZod(parsed.error);
  const event = parsed.data;
  const row = eventRow(event);

  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
    VALUES (${row.id}, ${row.type}, ${row.payload}, ${row.occurredAt}, ${row.tenant}, ${row.subject}::jsonb, ${row.subjectValues}::text[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id`;

  if (inserted.length === 0) {
    const existing = await tx.$queryRaw<{ type: string }[]>`SELECT type FROM events WHERE id = ${event.id}`;
    if (existing[0] && existing[0].type !== event.type) throw alreadyPublished(event.id, existing[0].type);
    const deliveries = await tx.$queryRaw<PublishedDelivery[]>`
      SELECT id, subscription_id AS "subscriptionId", delivery_key AS "deliveryKey"
      FROM deliveries WHERE event_id = ${event.id} ORDER BY subscription_id`;
    return { eventId: event.id, created: false, deliveries };
  }

  // Paused and disabled subscriptions get their deliveries too: held, never dropped
  // (invariant 7). A subscription with a tenant receives only that tenant's events.
  const deliveries = await tx.$queryRaw<PublishedDelivery[]>`
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
    SELECT encode(sha256(convert_to(s.id || ':' || ${event.id}, 'UTF8')), 'hex'), ${event.id}, s.id, ${event.type}
    FROM subscriptions s
    WHERE (s.event_types @> ARRAY[${event.type}]::text[] OR s.event_types @> ARRAY['*']::text[])
      AND (s.tenant IS NULL OR s.tenant = ${row.tenant})
    ORDER BY s.id
    RETURNING id, subscription_id AS "subscriptionId", delivery_key AS "deliveryKey"`;
  if (deliveries.length > 0) await tx.$executeRaw`SELECT pg_notify('hookledger_deliveries', '')`;
  return { eventId: event.id, created: true, deliveries };
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
