// Delivery detail: every attempt, every redrive with who and why (audit rows
// targeting the delivery), the request as sent (signature redacted) and the
// payload. The delivery and its attempts come from the ledger's one read
// model (lib/ledger/sql/get-delivery.ts).
import "server-only";
import { z } from "zod";
import { notFound } from "../errors";
import { USER_AGENT } from "../net/sender";
import { getDeliveryWithAttempts } from "../ledger/sql/get-delivery";
import { findDeliveryTombstone, getErasure, tombstoneSentence } from "../ledger/sql/erase";
import { findEventSubjects } from "../ledger/sql/lookup-events";
import { iso, ledgerDb, queryRows, sql, type LedgerDb } from "../ledger/read/db";
import type { DeliveryLite } from "./describe";
import { GLOBAL_SCOPE, type Scope } from "../tenants/scope";
import { displayUrl } from "../display-url";

const ZDeliveryId = z.string().regex(/^dlv_[0-9a-f]{26}$/, "a delivery id looks like dlv_ followed by 26 hex digits");

type AuditItem = { id: string; at: string; actor: string; action: string; reason: string | null; details: unknown };

/** A fixed_at_source resolution of another delivery that names this delivery's event as its corrected event. */
type Correction = { at: string; actor: string; reason: string | null; deliveryId: string; eventId: string | null };

export type DeliveryDetail = DeliveryLite & {
  /** Credentials masked (lib/display-url.ts). */
  subscriptionUrl: string;
  history: AuditItem[];
  /** Dead letters resolved as fixed at source by this delivery's event (it carried their corrected data). */
  corrections: Correction[];
  requestHeaders: [string, string][];
  payload: { bytes: number; pretty: string | null; base64: string };
};

/** `scope`: another tenant's delivery is not found (404) for a scoped caller; its audit rows and erasure are not read. */
export async function getDeliveryDetail(opts: { id: string; scope?: Scope }, db: LedgerDb = ledgerDb()): Promise<DeliveryDetail> {
  const id = ZDeliveryId.safeParse(opts.id).success ? opts.id : null;
  if (!id) throw notFound("Delivery", opts.id);
  // The delivery first, in scope: the audit rows and the erasure below are read only for one the caller may see.
  const found = await getDeliveryWithAttempts(db, id, { payload: true, scope: opts.scope ?? GLOBAL_SCOPE });
  if (!found) throw notFound("Delivery", id);
  const [d, audit, erased, subjects, corrections] = await Promise.all([
    found,
    // audit_entries_target index
    queryRows<{ id: number | bigint; created_at: Date; actor: string; action: string; reason: string | null; details: unknown }>(
      db,
      sql`SELECT id, created_at, actor, action, reason, details FROM audit_entries
           WHERE target_type = 'delivery' AND target_id = ${id} ORDER BY created_at DESC LIMIT 200`,
    ),
    erasureItem(db, id),
    findEventSubjects(db, [found.eventId]),
    // audit_entries_corrected_event (migration 0039): the resolve rows naming this event as the corrected one.
    queryRows<{ created_at: Date; actor: string; reason: string | null; target_id: string; details: { eventId?: string } | null }>(
      db,
      sql`SELECT created_at, actor, reason, target_id, details FROM audit_entries
           WHERE action = 'delivery.resolve' AND details ? 'correctedEventId' AND details ->> 'correctedEventId' = ${found.eventId}
           ORDER BY created_at DESC LIMIT 50`,
    ),
  ]);
  if (!d) throw notFound("Delivery", id);
  const payload = d.payload ?? Buffer.alloc(0);
  let pretty: string | null = null;
  try {
    pretty = JSON.stringify(JSON.parse(payload.toString("utf8")), null, 2);
  } catch {
    pretty = null;
  }
  const lastAttempt = d.attempts[d.attempts.length - 1];
  const ts = lastAttempt ? Math.floor(new Date(lastAttempt.startedAt).getTime() / 1000) : null;
  // What a receiver gets (docs/API.md); the signature itself is never shown.
  const requestHeaders: [string, string][] = [
    ["content-type", "application/json"],
    ["user-agent", USER_AGENT],
    ["webhook-id", d.deliveryKey],
    ["idempotency-key", d.deliveryKey],
    ["webhook-timestamp", ts === null ? "(set when sent)" : String(ts)],
    ["webhook-signature", "v1,[redacted]"],
  ];
  const { payload: _bytes, ...rest } = d;
  // A resolved delivery's decision is its newest delivery.resolve row (a redrive clears the decision; a later resolve writes a new row).
  const decision = d.state === "resolved" ? audit.find((a) => a.action === "delivery.resolve") : undefined;
  const correctedEventId = (decision?.details as { correctedEventId?: unknown } | null)?.correctedEventId;
  return {
    ...rest,
    subscriptionUrl: displayUrl(d.subscriptionUrl),
    correctedEventId: typeof correctedEventId === "string" ? correctedEventId : null,
    subject: subjects.get(d.eventId) ?? {},
    corrections: corrections.map((c) => ({ at: iso(c.created_at)!, actor: c.actor, reason: c.reason, deliveryId: c.target_id, eventId: c.details?.eventId ?? null })),
    history: [
      ...(erased ? [erased] : []),
      ...audit.map((a) => ({ id: String(a.id), at: iso(a.created_at)!, actor: a.actor, action: a.action, reason: a.reason, details: a.details })),
    ],
    requestHeaders,
    payload: { bytes: payload.byteLength, pretty, base64: payload.toString("base64") },
  };
}

/**
 * The erasure of the delivery's event as a timeline entry ("payload erased on … (erasure er_…)", who and why): its
 * audit row targets the erasure, not each delivery, so the timeline reads the event's tombstone and the erasure's row.
 */
async function erasureItem(db: LedgerDb, deliveryId: string): Promise<AuditItem | null> {
  const t = await findDeliveryTombstone(db, deliveryId);
  if (!t) return null;
  // An expunge by age (lib/ledger/sql/expunge.ts) is the retention runner's, not an erasure's: no erasure row to read.
  if (t.tombstone === "expunged")
    return {
      id: "expunged",
      at: iso(t.at)!,
      actor: "system",
      action: "retention.run",
      reason: `Payload expunged on ${iso(t.at)!.slice(0, 10)}: older than the payload retention. The delivery record (key, times, statuses) is kept; nothing is left to send.`,
      details: {},
    };
  const e = t.erasureId ? await getErasure(db, t.erasureId) : null;
  const said = tombstoneSentence(t).replace(/^its /, "");
  return {
    id: `erasure:${t.erasureId ?? t.tombstone}`,
    at: iso(t.at)!,
    actor: e?.actor ?? "system",
    action: "erasure.run",
    reason: `${said.charAt(0).toUpperCase()}${said.slice(1)}${e ? `: ${e.reason}` : ""}`,
    details: { erasureId: t.erasureId, subjectKey: e?.subjectKey ?? null },
  };
}
