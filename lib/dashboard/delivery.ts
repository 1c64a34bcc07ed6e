// Delivery detail: every attempt, every redrive with who and why (audit rows
// targeting the delivery), the request as sent (signature redacted) and the payload.
import { z } from "zod";
import { notFound } from "../errors";
import { db, DELIVERY_COLUMNS, iso, toDeliveryLite, type Db, type DeliveryRow } from "./sql";
import type { DeliveryLite } from "./describe";

export const ZDeliveryId = z.string().regex(/^dlv_[0-9a-f]{26}$/, "a delivery id looks like dlv_ followed by 26 hex digits");

export type AttemptDetail = DeliveryLite["attempts"][number] & {
  id: string;
  retryAfterSeconds: number | null;
  responseExcerpt: string | null;
  responseHeaders: Record<string, unknown> | null;
  workerId: string | null;
  ambiguous: boolean;
};

export type AuditItem = { id: string; at: string; actor: string; action: string; reason: string | null; details: unknown };

export type DeliveryDetail = Omit<DeliveryLite, "attempts"> & {
  subscriptionUrl: string;
  totalAttempts: number;
  attempts: AttemptDetail[];
  history: AuditItem[];
  requestHeaders: [string, string][];
  payload: { bytes: number; pretty: string | null; base64: string };
};

const VERSION = process.env.npm_package_version ?? "0.1.0";

export async function getDeliveryDetail(opts: { id: string }, pool: Db = db()): Promise<DeliveryDetail> {
  const id = ZDeliveryId.safeParse(opts.id).success ? opts.id : null;
  if (!id) throw notFound("Delivery", opts.id);
  const { rows } = await pool.query<DeliveryRow & { url: string; total_attempts: number; payload: Buffer }>(
    `SELECT ${DELIVERY_COLUMNS}, s.url, d.total_attempts, e.payload
     FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id JOIN events e ON e.id = d.event_id
     WHERE d.id = $1`,
    [id],
  );
  const r = rows[0];
  if (!r) throw notFound("Delivery", id);
  const [att, audit] = await Promise.all([
    pool.query(
      `SELECT id, attempt_number, trigger, actor, started_at, duration_ms, outcome, status_code, error_class, error_message,
              retry_after_seconds, response_headers, response_excerpt, worker_id, ambiguous
       FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number, id`,
      [id],
    ),
    // audit_entries_target index
    pool.query(
      `SELECT id, created_at, actor, action, reason, details FROM audit_entries
       WHERE target_type = 'delivery' AND target_id = $1 ORDER BY created_at DESC LIMIT 200`,
      [id],
    ),
  ]);
  const attempts: AttemptDetail[] = att.rows.map((a) => ({
    id: String(a.id),
    attemptNumber: a.attempt_number,
    trigger: a.trigger,
    actor: a.actor,
    startedAt: iso(a.started_at)!,
    durationMs: a.duration_ms,
    outcome: a.outcome,
    statusCode: a.status_code,
    errorClass: a.error_class,
    errorMessage: a.error_message,
    retryAfterSeconds: a.retry_after_seconds,
    responseHeaders: a.response_headers,
    responseExcerpt: a.response_excerpt,
    workerId: a.worker_id,
    ambiguous: a.ambiguous,
  }));
  const base = toDeliveryLite(r, attempts);
  const payload = Buffer.from(r.payload);
  let pretty: string | null = null;
  try {
    pretty = JSON.stringify(JSON.parse(payload.toString("utf8")), null, 2);
  } catch {
    pretty = null;
  }
  const lastAttempt = attempts[attempts.length - 1];
  const ts = lastAttempt ? Math.floor(new Date(lastAttempt.startedAt).getTime() / 1000) : null;
  // INTERFACES.md "What a receiver gets"; the signature itself is never shown.
  const requestHeaders: [string, string][] = [
    ["content-type", "application/json"],
    ["user-agent", `hookledger/${VERSION}`],
    ["webhook-id", r.delivery_key],
    ["Idempotency-Key", r.delivery_key],
    ["webhook-timestamp", ts === null ? "(set when sent)" : String(ts)],
    ["webhook-signature", "v1,[redacted]"],
  ];
  return {
    ...base,
    attempts,
    subscriptionUrl: r.url,
    totalAttempts: r.total_attempts,
    history: audit.rows.map((a) => ({ id: String(a.id), at: iso(a.created_at)!, actor: a.actor, action: a.action, reason: a.reason, details: a.details })),
    requestHeaders,
    payload: { bytes: payload.byteLength, pretty, base64: payload.toString("base64") },
  };
}
