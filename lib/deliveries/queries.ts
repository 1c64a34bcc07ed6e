// The public API's deliveries (GET /api/v1/deliveries[/:id]): validated
// filters over the ledger's finders (lib/ledger/sql/find-deliveries.ts,
// get-delivery.ts), and the response picked from the one read shape
// (lib/ledger/read/types.ts) as the API's view (lib/api/views.ts) names it.
import "server-only";
import { z } from "zod";
import { AppError, notFound } from "../errors";
import { DELIVERY_STATES } from "../ledger/states";
import { queryRows, sql, type LedgerDb } from "../ledger/read/db";
import { findDeliveries } from "../ledger/sql/find-deliveries";
import { getDeliveryWithAttempts as getLedgerDelivery } from "../ledger/sql/get-delivery";
import type { AttemptRecord, DeliveryRecord } from "../ledger/read/types";
import { ZDeliveryView, type DeliveryView } from "../api/views";
import { GLOBAL_SCOPE, scopeWhere, type Scope } from "../tenants/scope";

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

const VIEW_FIELDS = ZDeliveryView.keyof().options;

/** The public view of a record: its fields that ZDeliveryView picks. */
export function toDeliveryView(d: DeliveryRecord): DeliveryView {
  return Object.fromEntries(VIEW_FIELDS.map((k) => [k, d[k]])) as DeliveryView;
}

/** An attempt as the public API returns it: the read shape as it is. */
type AttemptView = AttemptRecord;

// Delivery ids are time-ordered (hl_new_id in the first migration), so the
// cursor is simply the last id seen, newest first.
function decodeCursor(cursor: string): string {
  if (!/^dlv_[0-9a-f]{26}$/.test(cursor)) throw new AppError("bad_request", "cursor: not a cursor returned by this API.");
  return cursor;
}

/** `scope`: a scoped caller lists its tenant's deliveries only; naming another tenant's subscription is as if it did not exist. */
export async function listDeliveries(db: LedgerDb, opts: TListDeliveries, scope: Scope = GLOBAL_SCOPE): Promise<{ items: DeliveryView[]; nextCursor: string | null }> {
  if (opts.subscriptionId) {
    const sub = await queryRows<{ id: string }>(db, sql`SELECT id FROM subscriptions WHERE id = ${opts.subscriptionId} AND ${scopeWhere(scope, "tenant")}`);
    if (sub.length === 0) {
      // A scoped caller gets the same 404 for another tenant's subscription as for none (existence is not revealed).
      if (scope.tenantId !== null) throw notFound("Subscription", opts.subscriptionId);
      throw new AppError("bad_request", `query.subscriptionId: subscription ${opts.subscriptionId} does not exist.`);
    }
  }
  const page = await findDeliveries(db, {
    subscriptionId: opts.subscriptionId,
    state: opts.state,
    eventId: opts.eventId,
    q: opts.q,
    cursor: opts.cursor ? decodeCursor(opts.cursor) : undefined,
    limit: opts.limit,
    scope,
  });
  return { items: page.items.map(toDeliveryView), nextCursor: page.nextCursor };
}

export async function getDeliveryWithAttempts(db: LedgerDb, id: string, scope: Scope = GLOBAL_SCOPE): Promise<DeliveryView & { attempts: AttemptView[] }> {
  const d = await getLedgerDelivery(db, id, { scope });
  if (!d) throw notFound("Delivery", id);
  return { ...toDeliveryView(d), attempts: d.attempts };
}
