// Shared plumbing for the dashboard's server-only query functions: the pooled
// `pg` connection (statement_timeout 10 s, lib/db/pool.ts) and row mapping.
// Every query here names the index it relies on.
import type pg from "pg";
import { getPool } from "../db/pool";
import { maxAttemptsOf, type AttemptLite, type DeliveryLite } from "./describe";

export type Db = pg.Pool;
export const db = (): Db => getPool();

export const iso = (x: Date | string | null | undefined): string | null => (x ? new Date(x).toISOString() : null);

/** Columns selected for a DeliveryLite (d = deliveries, s = subscriptions). */
export const DELIVERY_COLUMNS = `
  d.id, d.delivery_key, d.event_id, d.event_type, d.subscription_id, s.name AS subscription_name, s.tenant,
  s.state AS subscription_state, s.retry_policy, d.state, d.attempt_count, d.next_attempt_at, d.last_attempt_at,
  d.last_status_code, d.last_error_class, d.last_error_message, d.dead_letter_reason, d.dead_lettered_at,
  d.delivered_at, d.created_at`;

export type DeliveryRow = {
  id: string;
  delivery_key: string;
  event_id: string;
  event_type: string;
  subscription_id: string;
  subscription_name: string;
  tenant: string | null;
  subscription_state: string;
  retry_policy: unknown;
  state: string;
  attempt_count: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error_class: string | null;
  last_error_message: string | null;
  dead_letter_reason: string | null;
  dead_lettered_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
};

export function toDeliveryLite(r: DeliveryRow, attempts: AttemptLite[] = []): DeliveryLite {
  return {
    id: r.id,
    deliveryKey: r.delivery_key,
    eventId: r.event_id,
    eventType: r.event_type,
    subscriptionId: r.subscription_id,
    subscriptionName: r.subscription_name,
    tenant: r.tenant,
    subscriptionState: r.subscription_state,
    state: r.state,
    attemptCount: r.attempt_count,
    maxAttempts: maxAttemptsOf(r.retry_policy),
    nextAttemptAt: r.state === "pending" || r.state === "scheduled" ? iso(r.next_attempt_at) : null,
    lastAttemptAt: iso(r.last_attempt_at),
    lastStatusCode: r.last_status_code,
    lastErrorClass: r.last_error_class,
    lastErrorMessage: r.last_error_message,
    deadLetterReason: r.dead_letter_reason,
    deadLetteredAt: iso(r.dead_lettered_at),
    deliveredAt: iso(r.delivered_at),
    createdAt: iso(r.created_at)!,
    attempts,
  };
}

/** Attempts of several deliveries (attempts_delivery index), grouped by delivery id. */
export async function attemptsFor(pool: Db, deliveryIds: string[]): Promise<Map<string, AttemptLite[]>> {
  const out = new Map<string, AttemptLite[]>();
  if (deliveryIds.length === 0) return out;
  const { rows } = await pool.query(
    `SELECT delivery_id, attempt_number, trigger, actor, started_at, duration_ms, outcome, status_code,
            error_class, error_message, left(response_excerpt, 200) AS response_excerpt
     FROM attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt_number`,
    [deliveryIds],
  );
  for (const r of rows) {
    const list = out.get(r.delivery_id) ?? [];
    list.push({
      attemptNumber: r.attempt_number,
      trigger: r.trigger,
      actor: r.actor,
      startedAt: iso(r.started_at)!,
      durationMs: r.duration_ms,
      outcome: r.outcome,
      statusCode: r.status_code,
      errorClass: r.error_class,
      errorMessage: r.error_message,
      responseExcerpt: r.response_excerpt,
    });
    out.set(r.delivery_id, list);
  }
  return out;
}
