// Seeding the ledger fast for tests and benches: events generated in SQL and
// enqueued through hl_enqueue_events (./enqueue.ts), the one enqueue path, so
// keys, matching and the NOTIFY are the production ones. Only rows that must
// start in another state (a retry already scheduled, a dead letter to redrive)
// are written as fixtures, directly, since enqueueing them and then updating
// them would fire the operational-event triggers as if their attempts had
// happened. Production code never calls this file.
import "server-only";
import type pg from "pg";

/**
 * `n` events `<prefix>1..n` of type assignment.graded, of `tenant` (none by default), each enqueued to every
 * listed subscription that matches it (type, tenant) and to no other.
 */
export async function seedEventsFanOut(db: pg.Pool | pg.PoolClient, prefix: string, n: number, subscriptionIds: string[], tenant: string | null = null): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM (SELECT array_agg($1 || g ORDER BY g) AS ids,
                    array_agg('assignment.graded'::text ORDER BY g) AS types,
                    array_agg(convert_to(json_build_object('id', $1 || g, 'type', 'assignment.graded', 'timestamp', now(), 'data', json_build_object('n', g))::text, 'UTF8') ORDER BY g) AS payloads,
                    array_agg(now() ORDER BY g) AS ats,
                    array_agg($4::text ORDER BY g) AS tenants,
                    array_agg(CASE WHEN $4::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('tenant', $4::text) END ORDER BY g) AS subjects,
                    array_agg(1 ORDER BY g) AS sv_from, array_agg(0 ORDER BY g) AS sv_to
               FROM generate_series(1, $2::int) g) a,
            LATERAL hl_enqueue_events(a.ids, a.types, a.payloads, a.ats, a.tenants, a.subjects, '{}'::text[], a.sv_from, a.sv_to, $3::text[]) x
      WHERE x.delivery_id IS NOT NULL`,
    [prefix, n, subscriptionIds, tenant],
  );
  return rows[0].n;
}

export type SeedOptions = {
  prefix: string;
  /** Event numbers from..to (inclusive): events `<prefix><g>`. */
  from: number;
  to: number;
  /** Event g goes to subs[g mod len]: its tenant is that id, so the subscriptions must be tenant-scoped to their own id. */
  subs: string[];
  eventType: string;
  /** Padding in the envelope's data, in bytes. */
  padBytes: number;
};

// The envelope of a generated event g ($1 prefix, $4 type, $5 padding), as publishEvent would store it.
const ENVELOPE = `convert_to('{"id":"' || $1 || g || '","type":"' || $4 || '","timestamp":"' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                 || '","data":{"studentId":"stu_' || g || '","assignmentId":"asg_7","score":93,"comment":"' || repeat('x', $5::int) || '"}}', 'UTF8')`;

/** Events `<prefix><from..to>`, event g enqueued (pending, due now) to subs[g mod len], in one statement. */
export async function seedRoundRobin(db: pg.Pool | pg.PoolClient, o: SeedOptions): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM (SELECT array_agg($1 || g ORDER BY g) AS ids,
                    array_agg($4::text ORDER BY g) AS types,
                    array_agg(${ENVELOPE} ORDER BY g) AS payloads,
                    array_agg(now() ORDER BY g) AS ats,
                    array_agg(($6::text[])[1 + (g % array_length($6::text[], 1))] ORDER BY g) AS tenants,
                    array_agg(jsonb_build_object('studentId', 'stu_' || g) ORDER BY g) AS subjects,
                    array_agg(2 * (g - $2::int) + 1 ORDER BY g) AS sv_from, array_agg(2 * (g - $2::int) + 2 ORDER BY g) AS sv_to,
                    ARRAY(SELECT v FROM generate_series($2::int, $3::int) h, unnest(ARRAY['stu_' || h, 'studentId:stu_' || h]) WITH ORDINALITY u(v, k) ORDER BY h, k) AS svs
               FROM generate_series($2::int, $3::int) g) a,
            LATERAL hl_enqueue_events(a.ids, a.types, a.payloads, a.ats, a.tenants, a.subjects, a.svs, a.sv_from, a.sv_to, $6::text[]) x
      WHERE x.delivery_id IS NOT NULL`,
    [o.prefix, o.from, o.to, o.eventType, o.padBytes, o.subs],
  );
  return rows[0].n;
}

/**
 * Fixture rows: events `<prefix><from..to>` (as seedRoundRobin writes them)
 * with deliveries already in `state`, as if their earlier attempts had
 * happened: `attemptCount` attempts, due at now() + `dueOffsetSql` (an SQL
 * expression over g, the event number), dead letters as `exhausted` after a
 * 503. Keys by hl_delivery_key. No attempt rows are written.
 */
export async function seedFixtureDeliveries(
  db: pg.Pool | pg.PoolClient,
  o: SeedOptions & { state: "pending" | "scheduled" | "dead_letter"; attemptCount: number; dueOffsetSql: string },
): Promise<void> {
  await db.query(
    `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values)
     SELECT $1 || g, $4, ${ENVELOPE},
            now(), jsonb_build_object('studentId', 'stu_' || g), ARRAY['stu_' || g, 'studentId:stu_' || g]
       FROM generate_series($2::int, $3::int) g`,
    [o.prefix, o.from, o.to, o.eventType, o.padBytes],
  );
  await db.query(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, next_attempt_at, attempt_count, total_attempts,
                             dead_letter_reason, dead_lettered_at, last_error_class, last_status_code, event_at)
     SELECT hl_delivery_key(s, $1 || g), $1 || g, s, $4, $5,
            now() + (${o.dueOffsetSql}), $6, $6,
            CASE WHEN $5 = 'dead_letter' THEN 'exhausted' END, CASE WHEN $5 = 'dead_letter' THEN now() END,
            CASE WHEN $5 = 'dead_letter' THEN 'http_5xx' END, CASE WHEN $5 = 'dead_letter' THEN 503 END, k.created_at
       FROM generate_series($2::int, $3::int) g
       JOIN event_keys k ON k.id = $1 || g,
       LATERAL (SELECT ($7::text[])[1 + (g % array_length($7::text[], 1))] AS s) x`,
    [o.prefix, o.from, o.to, o.eventType, o.state, o.attemptCount, o.subs],
  );
}
