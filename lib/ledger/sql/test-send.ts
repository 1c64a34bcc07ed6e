// Test sends (POST /api/v1/subscriptions/:id/test): the stored event a test
// may re-send, and the record of each test and the endpoint's answer. A test
// send is not a delivery: it lives in test_sends, which no count, trigger,
// DLQ query or failure window reads.
import "server-only";
import { iso, queryRows, sql, type LedgerDb } from "../read/db";

/** A stored event whose bytes a test may send to this subscription: only one that was delivered (or is due) to it. */
export async function eventForTestSend(db: LedgerDb, subscriptionId: string, eventId: string): Promise<{ id: string; type: string; payload: Buffer } | null> {
  const rows = await queryRows<{ id: string; type: string; payload: Buffer | Uint8Array }>(
    db,
    sql`SELECT e.id, e.type, e.payload FROM events e
         WHERE e.id = ${eventId}
           AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.event_at = e.created_at AND d.subscription_id = ${subscriptionId})`,
  );
  const r = rows[0];
  return r ? { id: r.id, type: r.type, payload: Buffer.from(r.payload) } : null;
}

export type TestSendRecord = {
  id: string;
  subscriptionId: string;
  actor: string;
  eventId: string | null;
  eventType: string;
  url: string;
  statusCode: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  durationMs: number;
  responseHeaders: Record<string, string> | null;
  responseExcerpt: string | null;
  createdAt: string;
};

/** The subscription's most recent test sends, newest first. */
export async function listTestSends(db: LedgerDb, subscriptionId: string, limit = 20): Promise<TestSendRecord[]> {
  const rows = await queryRows<{
    id: string;
    subscription_id: string;
    actor: string;
    event_id: string | null;
    event_type: string;
    url: string;
    status_code: number | null;
    error_class: string | null;
    error_message: string | null;
    duration_ms: number;
    response_headers: Record<string, string> | null;
    response_excerpt: string | null;
    created_at: Date;
  }>(db, sql`SELECT * FROM test_sends WHERE subscription_id = ${subscriptionId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`);
  return rows.map((r) => ({
    id: r.id,
    subscriptionId: r.subscription_id,
    actor: r.actor,
    eventId: r.event_id,
    eventType: r.event_type,
    url: r.url,
    statusCode: r.status_code,
    errorClass: r.error_class,
    errorMessage: r.error_message,
    durationMs: r.duration_ms,
    responseHeaders: r.response_headers,
    responseExcerpt: r.response_excerpt,
    createdAt: iso(r.created_at)!,
  }));
}

/** How many test sends the subscription had in the last `seconds` (the per-subscription rate limit). */
export async function testSendsSince(db: LedgerDb, subscriptionId: string, seconds: number): Promise<number> {
  const rows = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM test_sends WHERE subscription_id = ${subscriptionId} AND created_at > now() - make_interval(secs => ${seconds})`,
  );
  return Number(rows[0].n);
}

/**
 * Takes a test send's place under the per-subscription limit, or answers false
 * (and leaves nothing) at the limit. Run it in a transaction of its own (the
 * caller's `prisma.$transaction`, a few milliseconds): a per-subscription
 * advisory lock makes the count and the insert one step, so of any number of
 * requests at once exactly `limit` pass. Counting after inserting without it
 * let a parallel burst see each other's rows and all refuse. No transaction is
 * held while sending; the answer is filled in by finishTestSend.
 */
export async function reserveTestSend(
  tx: LedgerDb,
  r: { id: string; subscriptionId: string; actor: string; eventId: string | null; eventType: string; url: string },
  limit: number,
  seconds: number,
): Promise<boolean> {
  await queryRows(tx, sql`SELECT pg_advisory_xact_lock(hashtextextended(${`hookledger.test_send:${r.subscriptionId}`}, 0))::text AS locked`);
  if ((await testSendsSince(tx, r.subscriptionId, seconds)) >= limit) return false;
  await queryRows(
    tx,
    sql`INSERT INTO test_sends (id, subscription_id, actor, event_id, event_type, url, error_message, duration_ms)
        VALUES (${r.id}, ${r.subscriptionId}, ${r.actor}, ${r.eventId}, ${r.eventType}, ${r.url}, ${"Sending…"}, 0) RETURNING id`,
  );
  return true;
}

/** Records the endpoint's answer on a test send reserved by reserveTestSend. */
export async function finishTestSend(db: LedgerDb, r: Omit<TestSendRecord, "createdAt">): Promise<TestSendRecord> {
  const rows = await queryRows<{ created_at: Date }>(
    db,
    sql`UPDATE test_sends SET status_code = ${r.statusCode}, error_class = ${r.errorClass}, error_message = ${r.errorMessage}, duration_ms = ${r.durationMs},
               response_headers = ${r.responseHeaders === null ? null : JSON.stringify(r.responseHeaders)}::jsonb, response_excerpt = ${r.responseExcerpt}
         WHERE id = ${r.id}
        RETURNING created_at`,
  );
  return { ...r, createdAt: iso(rows[0].created_at)! };
}
