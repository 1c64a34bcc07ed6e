// Seeding for the redrive tests: subscriptions through the real service,
// events through publishEvent, dead letters by the worker's own terminal
// transition (state, reason, error class, status code, time).
import type { TestDb } from "./db";
import { SYSTEM } from "../../lib/auth/principal";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import type { LedgerDb } from "../../lib/ledger/read/db";
import { settleFinishedBatches, type SettleCursor } from "../../lib/ledger/sql/recover";

export async function seedSubscription(db: TestDb, id: string, url = `https://${id}.example.test/hooks`, state: "active" | "paused" | "disabled" = "active") {
  await createSubscription(db.prisma, { id, name: `${id} SIS`, url, eventTypes: ["assignment.graded"] }, SYSTEM);
  if (state !== "active")
    await db.pool.query("UPDATE subscriptions SET state = $2, state_reason = $3 WHERE id = $1", [id, state, state === "disabled" ? "410 Gone" : "maintenance"]);
}

/**
 * `n` events, each delivered to every subscription, then the deliveries of
 * `subscriptionId` dead-lettered as the worker would. Bulk SQL: 10,000 rows in
 * about a second.
 */
export async function seedDeadLetters(
  db: TestDb,
  opts: {
    subscriptionId: string;
    n: number;
    prefix?: string;
    reason?: string;
    errorClass?: string;
    statusCode?: number;
    at?: Date;
    subject?: (i: number) => Record<string, string>;
  },
): Promise<string[]> {
  const prefix = opts.prefix ?? `evt_${opts.subscriptionId}_`;
  const at = opts.at ?? new Date(Date.now() - 60_000);
  const subject = opts.subject ?? ((i: number) => ({ tenant: "lincoln", studentId: `stu_${i}`, assignmentId: "asg_7" }));
  const ids = Array.from({ length: opts.n }, (_, i) => `${prefix}${i}`);
  const subjects = ids.map((_, i) => JSON.stringify(subject(i)));
  await db.pool.query(
    `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
     SELECT id, 'assignment.graded', convert_to(json_build_object('id', id, 'type', 'assignment.graded', 'data', subj::jsonb)::text, 'UTF8'),
            $3::timestamptz - make_interval(secs => $4 - ord), 'lincoln', subj::jsonb,
            ARRAY(SELECT v FROM jsonb_each_text(subj::jsonb) kv, LATERAL (VALUES (kv.value), (kv.key || ':' || kv.value)) x(v))
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(id, subj, ord)
      -- An event id's uniqueness is event_keys' (events is partitioned by month: migration 0021).
      WHERE NOT EXISTS (SELECT 1 FROM event_keys k WHERE k.id = t.id)`,
    [ids, subjects, at.toISOString(), opts.n],
  );
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                             last_status_code, last_error_class, last_error_message, dead_letter_reason, dead_lettered_at, last_attempt_at, event_at)
     SELECT hl_delivery_key($2, e), e, $2, 'assignment.graded', 'dead_letter', 1, 1,
            $3, $4, 'rejected', $5, $6::timestamptz, $6::timestamptz, k.created_at
       FROM unnest($1::text[]) AS e JOIN event_keys k ON k.id = e
     RETURNING id`,
    [ids, opts.subscriptionId, opts.statusCode ?? 422, opts.errorClass ?? "http_4xx", opts.reason ?? "permanent", at.toISOString()],
  );
  return rows.map((r) => r.id);
}

/**
 * The pacer's settle rounds, `perRound` batches each, from the oldest finished batch not yet settled until every one has
 * been looked at once (a round that looks at fewer than `perRound` is the last), in at most 10 rounds: a cursor that did
 * not move on would otherwise loop for ever, and the caller's assertions say what was left.
 */
export async function settleEveryFinishedBatch(db: LedgerDb, perRound: number): Promise<void> {
  let after: SettleCursor | null = null;
  for (let round = 0; round < 10; round++) {
    const { looked } = await settleFinishedBatches(db, { after, limit: perRound });
    const last = looked.at(-1);
    if (looked.length < perRound || !last) return;
    after = { at: last.at, id: last.id };
  }
}
