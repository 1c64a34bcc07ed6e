// Seeds ledger states directly in SQL for the dashboard's query tests: the
// states the worker produces (delivered, retrying, dead-lettered, in flight,
// held) with their attempts rows, at chosen times.
import type pg from "pg";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { rollupAttemptStats } from "../../lib/rollups/sampler";

export async function seedSubscription(pool: pg.Pool, s: { id: string; name: string; tenant?: string | null; state?: string; retryPolicy?: object }) {
  await pool.query(`INSERT INTO subscriptions (id, name, tenant, url, event_types, state, retry_policy) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    s.id,
    s.name,
    s.tenant ?? null,
    `https://${s.id}.example.test/hook`,
    ["assignment.graded"],
    s.state ?? "active",
    JSON.stringify(s.retryPolicy ?? {}),
  ]);
}

export async function seedEvent(pool: pg.Pool, e: { id: string; subject?: Record<string, string>; createdAt?: Date; type?: string }) {
  const subject = e.subject ?? {};
  const values = Object.entries(subject).flatMap(([k, v]) => [v, `${k}:${v}`]);
  const body = JSON.stringify({ id: e.id, type: e.type ?? "assignment.graded", timestamp: new Date().toISOString(), data: { score: 93 } });
  await pool.query(`INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at) VALUES ($1, $2, $3, now(), $4, $5, $6, $7)`, [
    e.id,
    e.type ?? "assignment.graded",
    Buffer.from(body),
    subject.tenant ?? null,
    JSON.stringify(subject),
    values,
    e.createdAt ?? new Date(),
  ]);
}

export type SeedAttempt = {
  at: Date;
  status?: number | null;
  errorClass?: string | null;
  outcome: "delivered" | "retry" | "dead_letter" | "abandoned";
  ms?: number;
  excerpt?: string;
  trigger?: string;
  actor?: string;
};

/** A delivery in `state` with the given attempts; last_* columns follow the last attempt. */
export async function seedDelivery(
  pool: pg.Pool,
  d: { subscriptionId: string; eventId: string; state: string; attempts?: SeedAttempt[]; nextAttemptAt?: Date; reason?: string; eventType?: string },
): Promise<string> {
  const attempts = d.attempts ?? [];
  const last = attempts[attempts.length - 1];
  const { rows } = await pool.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts, next_attempt_at,
        last_attempt_at, last_status_code, last_error_class, last_error_message, dead_letter_reason, dead_lettered_at, delivered_at, event_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6, coalesce($7, now()), $8, $9, $10, $11, $12, $13, $14, (SELECT created_at FROM event_keys WHERE id = $2)) RETURNING id`,
    [
      deliveryKey(d.subscriptionId, d.eventId),
      d.eventId,
      d.subscriptionId,
      d.eventType ?? "assignment.graded",
      d.state,
      attempts.length,
      d.nextAttemptAt ?? null,
      last?.at ?? null,
      last?.status ?? null,
      last && last.outcome !== "delivered" ? (last.errorClass ?? null) : null,
      last && last.outcome !== "delivered" ? (last.excerpt ?? null) : null,
      d.state === "dead_letter" ? (d.reason ?? "permanent") : null,
      d.state === "dead_letter" ? (last?.at ?? new Date()) : null,
      d.state === "delivered" ? (last?.at ?? new Date()) : null,
    ],
  );
  const id = rows[0].id as string;
  let n = 0;
  for (const a of attempts) {
    n++;
    await pool.query(
      `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, actor, started_at, duration_ms, outcome, status_code, error_class,
          error_message, response_excerpt, worker_id, retry_after_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'w-test', NULL)`,
      [
        id,
        d.subscriptionId,
        n,
        a.trigger ?? "scheduled",
        a.actor ?? null,
        a.at,
        a.ms ?? 100,
        a.outcome,
        a.status ?? null,
        a.errorClass ?? null,
        a.excerpt ?? null,
        a.excerpt ?? null,
      ],
    );
  }
  return id;
}

/**
 * Dates a seeded delivery and its attempts as the ledger would have written
 * them: the delivery at `createdAt`, each attempt when it ended (the result
 * write stores it with the outcome, so no attempt is newer than the finish).
 * seedDelivery alone leaves both at now(), which retention, reading by month,
 * would not see as old.
 */
export async function backdate(pool: pg.Pool, deliveryId: string, createdAt: Date): Promise<void> {
  await pool.query("UPDATE deliveries SET created_at = $2 WHERE id = $1", [deliveryId, createdAt]);
  await pool.query("UPDATE attempts SET created_at = started_at + make_interval(secs => coalesce(duration_ms, 0) / 1000.0) WHERE delivery_id = $1", [deliveryId]);
}

/**
 * Work retention will find expired: `n` events of `tenant`, each with one
 * delivered delivery to `subscriptionId` and its attempt, all dated `at` as
 * the ledger writes them (backdate), and the attempts folded into the stats
 * (a run removes an attempt only once the rollup has counted it).
 */
export async function seedFinishedWork(pool: pg.Pool, o: { subscriptionId: string; tenant: string; prefix: string; n: number; at: Date }): Promise<void> {
  for (let i = 0; i < o.n; i++) {
    await seedEvent(pool, { id: `${o.prefix}${i}`, createdAt: o.at, subject: { tenant: o.tenant } });
    const d = await seedDelivery(pool, {
      subscriptionId: o.subscriptionId,
      eventId: `${o.prefix}${i}`,
      state: "delivered",
      attempts: [{ at: o.at, outcome: "delivered", status: 200 }],
    });
    await backdate(pool, d, o.at);
  }
  await rollupAttemptStats(pool, { settleSeconds: 0, maxChunks: 100 });
}

export const minutesAgo = (m: number, now = Date.now()) => new Date(now - m * 60_000);
export const daysAgo = (d: number, now = Date.now()) => new Date(now - d * 86_400_000);
