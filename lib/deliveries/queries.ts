import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import type { Prisma } from "../generated/prisma/client";
import { AppError, notFound } from "../errors";
import { DELIVERY_STATES } from "../ledger/states";

export const ZListDeliveries = z
  .object({
    subscriptionId: z.string().max(64).optional(),
    state: z.enum(DELIVERY_STATES).optional(),
    eventId: z.string().max(200).optional(),
    q: z.string().trim().min(1).max(200).optional(),
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();
export type TListDeliveries = z.infer<typeof ZListDeliveries>;

export type DeliveryView = {
  id: string;
  deliveryKey: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  state: string;
  attemptCount: number;
  totalAttempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastErrorClass: string | null;
  lastErrorMessage: string | null;
  deadLetterReason: string | null;
  deadLetteredAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
};

type DeliveryRow = Prisma.DeliveryGetPayload<object>;

export function toDeliveryView(d: DeliveryRow): DeliveryView {
  const iso = (x: Date | null) => (x ? x.toISOString() : null);
  return {
    id: d.id,
    deliveryKey: d.deliveryKey,
    eventId: d.eventId,
    eventType: d.eventType,
    subscriptionId: d.subscriptionId,
    state: d.state,
    attemptCount: d.attemptCount,
    totalAttempts: d.totalAttempts,
    nextAttemptAt: d.state === "pending" || d.state === "scheduled" ? iso(d.nextAttemptAt) : null,
    lastAttemptAt: iso(d.lastAttemptAt),
    lastStatusCode: d.lastStatusCode,
    lastErrorClass: d.lastErrorClass,
    lastErrorMessage: d.lastErrorMessage,
    deadLetterReason: d.deadLetterReason,
    deadLetteredAt: iso(d.deadLetteredAt),
    deliveredAt: iso(d.deliveredAt),
    createdAt: d.createdAt.toISOString(),
  };
}

// Delivery ids are time-ordered (hl_new_id in the first migration), so the
// cursor is simply the last id seen, newest first.
function decodeCursor(cursor: string): string {
  if (!/^dlv_[0-9a-f]{26}$/.test(cursor)) throw new AppError("bad_request", "cursor: not a cursor returned by this API.");
  return cursor;
}

export async function listDeliveries(prisma: PrismaClient, opts: TListDeliveries) {
  const where: Prisma.DeliveryWhereInput = {};
  if (opts.subscriptionId) {
    const sub = await prisma.subscription.findUnique({ where: { id: opts.subscriptionId }, select: { id: true } });
    if (!sub) throw new AppError("bad_request", `subscriptionId: subscription ${opts.subscriptionId} does not exist.`);
    where.subscriptionId = opts.subscriptionId;
  }
  if (opts.state) where.state = opts.state;
  if (opts.eventId) where.eventId = opts.eventId;
  if (opts.q) {
    // Each branch on its own index (events by id and by the subject_values GIN
    // index; deliveries by key and id), then deliveries by event_id: a Prisma OR
    // with a relation filter would scan every delivery (BENCHMARKS.md F4).
    const events = await prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM events WHERE id = ${opts.q}
      UNION SELECT id FROM events WHERE subject_values @> ARRAY[${opts.q}]::text[]`;
    where.OR = [{ deliveryKey: opts.q }, { id: opts.q }];
    if (events.length > 0) where.OR.push({ eventId: { in: events.map((e) => e.id) } });
  }
  if (opts.cursor) {
    where.AND = [{ id: { lt: decodeCursor(opts.cursor) } }];
  }
  const rows = await prisma.delivery.findMany({
    where,
    orderBy: { id: "desc" },
    take: opts.limit + 1,
  });
  const items = rows.slice(0, opts.limit);
  const nextCursor = rows.length > opts.limit ? items[items.length - 1].id : null;
  return { items: items.map(toDeliveryView), nextCursor };
}

export async function getDeliveryWithAttempts(prisma: PrismaClient, id: string) {
  const d = await prisma.delivery.findUnique({
    where: { id },
    include: { attempts: { orderBy: { attemptNumber: "asc" } } },
  });
  if (!d) throw notFound("Delivery", id);
  return {
    ...toDeliveryView(d),
    attempts: d.attempts.map((a) => ({
      id: String(a.id),
      attemptNumber: a.attemptNumber,
      trigger: a.trigger,
      actor: a.actor,
      startedAt: a.startedAt.toISOString(),
      durationMs: a.durationMs,
      outcome: a.outcome,
      statusCode: a.statusCode,
      errorClass: a.errorClass,
      errorMessage: a.errorMessage,
      retryAfterSeconds: a.retryAfterSeconds,
      responseHeaders: a.responseHeaders,
      responseExcerpt: a.responseExcerpt,
      workerId: a.workerId,
      ambiguous: a.ambiguous,
    })),
  };
}
