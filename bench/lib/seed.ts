// Writing the ledger fast, straight in SQL (the issue: "published first, fast,
// not the HTTP API"). The rows are what publishEvent writes: the stored
// envelope bytes, sha256 delivery keys, one delivery per (event, subscription).
import pg from "pg";
import { generateSecret, sealSecret } from "../../lib/subscriptions/secrets";

export type SubSpec = {
  id: string;
  url: string;
  state?: "active" | "paused";
  tenant?: string | null;
  maxConcurrency?: number;
  retryPolicy?: Record<string, unknown>;
  eventTypes?: string[];
};

export async function createSubs(db: pg.Pool, subs: SubSpec[]): Promise<void> {
  for (const s of subs) {
    await db.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, retry_policy, max_concurrency)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        s.id,
        `District ${s.id}`,
        s.tenant ?? null,
        s.url,
        s.eventTypes ?? ["assignment.graded"],
        s.state ?? "active",
        JSON.stringify(s.retryPolicy ?? {}),
        s.maxConcurrency ?? 10,
      ],
    );
    await db.query("INSERT INTO subscription_secrets (id, subscription_id, secret) VALUES ($1, $2, $3)", [`sec_${s.id}`, s.id, sealSecret(generateSecret())]);
  }
}

/**
 * `count` events `<prefix><n>`, event n going to subscription n mod len(subs)
 * (one district per event, as tenant-scoped subscriptions do), each with an
 * envelope of about `payloadBytes` bytes. Deliveries get `state` and a due time
 * of now() + `dueOffsetSql` (an SQL expression over g, the event number).
 */
export async function seedDeliveries(
  db: pg.Pool,
  opts: {
    prefix: string;
    count: number;
    subs: string[];
    payloadBytes?: number;
    state?: "pending" | "scheduled" | "dead_letter";
    dueOffsetSql?: string;
    eventType?: string;
    attemptCount?: number;
    chunk?: number;
  },
): Promise<void> {
  const type = opts.eventType ?? "assignment.graded";
  const pad = Math.max(0, (opts.payloadBytes ?? 1024) - 150);
  const chunk = opts.chunk ?? 50_000;
  for (let from = 1; from <= opts.count; from += chunk) {
    const to = Math.min(opts.count, from + chunk - 1);
    await db.query(
      `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values)
       SELECT $1 || g, $4,
              convert_to('{"id":"' || $1 || g || '","type":"' || $4 || '","timestamp":"' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                         || '","data":{"studentId":"stu_' || g || '","assignmentId":"asg_7","score":93,"comment":"' || repeat('x', $5::int) || '"}}', 'UTF8'),
              now(), jsonb_build_object('studentId', 'stu_' || g), ARRAY['stu_' || g, 'studentId:stu_' || g]
         FROM generate_series($2::int, $3::int) g`,
      [opts.prefix, from, to, type, pad],
    );
    await db.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, next_attempt_at, attempt_count, total_attempts,
                               dead_letter_reason, dead_lettered_at, last_error_class, last_status_code)
       SELECT encode(sha256(convert_to(s || ':' || $1 || g, 'UTF8')), 'hex'), $1 || g, s, $4, $5,
              now() + (${opts.dueOffsetSql ?? "interval '0'"}), $6, $6,
              CASE WHEN $5 = 'dead_letter' THEN 'exhausted' END, CASE WHEN $5 = 'dead_letter' THEN now() END,
              CASE WHEN $5 = 'dead_letter' THEN 'http_5xx' END, CASE WHEN $5 = 'dead_letter' THEN 503 END
         FROM generate_series($2::int, $3::int) g, LATERAL (SELECT ($7::text[])[1 + (g % array_length($7::text[], 1))] AS s) x`,
      [opts.prefix, from, to, type, opts.state ?? "pending", opts.attemptCount ?? 0, opts.subs],
    );
  }
  await db.query("SELECT pg_notify('hookledger_deliveries', '')");
}

/** Deliveries of these subscriptions in `state`, from the trigger-kept counters (no scan of the queue). */
export async function countState(db: pg.Pool, state: string, subs?: string[]): Promise<number> {
  const { rows } = await db.query(
    `SELECT coalesce(sum(n), 0)::bigint AS n FROM delivery_state_counts WHERE state = $1 AND ($2::text[] IS NULL OR subscription_id = ANY($2))`,
    [state, subs ?? null],
  );
  return Number(rows[0].n);
}

/** Polls `fn` every `everyMs` until it returns true or `timeoutMs` passes; false on timeout. */
export async function pollUntil(fn: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return fn();
}
