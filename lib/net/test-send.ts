// A test send: a signed `hookledger.ping`, one stored event's bytes, or the event catalog's example of a type, sent
// now to a subscription's endpoint with its headers and client certificate,
// answered with what the endpoint said. The way a district confirms a fix
// before anyone redrives. Recorded in test_sends (not a delivery: no count,
// DLQ or failure window sees it) and audited, in one transaction, after the
// send; a 4xx of ours (unknown subscription or event) sends and writes nothing.
//
// Marking: every test carries the header `hookledger-test: 1` and a webhook-id
// of its own (`tst_…`), never the delivery key of the event it re-sends, so a
// receiver that de-duplicates on webhook-id still applies the real delivery,
// and one that wants to ignore tests can. The body and signature are what a
// delivery of those bytes would carry.
import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/prisma";
import { ledgerDb } from "../ledger/read/db";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { parseRetryPolicy } from "../ledger/retry-policy";
import { findEventTombstones, tombstoneSentence } from "../ledger/sql/erase";
import { eventForTestSend, finishTestSend, listTestSends, reserveTestSend, testSendsSince, type TestSendRecord } from "../ledger/sql/test-send";
import { openSecret } from "../subscriptions/secrets";
import { openEndpointAuth, redactSecrets } from "../subscriptions/endpoint-auth";
import { displayUrl, urlSecrets } from "../display-url";
import { privateTargetsAllowed } from "./ssrf";
import { Sender, pingBody } from "./sender";

const TEST_HEADER = "hookledger-test";

/**
 * The body of POST /api/v1/subscriptions/:id/test: empty or `{}` for a ping, `{eventId}` to re-send one of this
 * subscription's events, `{eventType}` to send the event catalog's example of a type it takes.
 */
export const ZTestSend = z
  .object({ eventId: z.string().min(1).max(200).optional(), eventType: z.string().min(1).max(200).optional() })
  .strict()
  .refine((v) => !(v.eventId && v.eventType), { message: "send either an event (eventId) or a type's example (eventType), not both", path: ["eventType"] });
const PING_TYPE = "hookledger.ping";
/**
 * Test sends per subscription per minute. A test is a person checking an
 * endpoint; more than this is a loop or a flood aimed at a district through
 * hookledger, and is answered 429 without sending.
 */
const TEST_SENDS_PER_MINUTE = 10;

/** What the API answers: the endpoint's status, latency, headers and first 4 KB of its body; status null and an error when it did not answer. */
export type TestSendView = {
  id: string;
  status: number | null;
  latencyMs: number;
  headers: Record<string, string> | null;
  body: string | null;
  error: string | null;
  errorClass: string | null;
  eventId: string | null;
  eventType: string;
  url: string;
  actor: string;
  sentAt: string;
};

function toTestSendView(r: TestSendRecord): TestSendView {
  return {
    id: r.id,
    status: r.statusCode,
    latencyMs: r.durationMs,
    headers: r.responseHeaders,
    body: r.responseExcerpt,
    error: r.errorMessage,
    errorClass: r.errorClass,
    eventId: r.eventId,
    eventType: r.eventType,
    // A record of what was sent, read by every reader of the subscription: the URL's credentials masked.
    url: displayUrl(r.url),
    actor: r.actor,
    sentAt: r.createdAt,
  };
}

const g = globalThis as unknown as { __hookledgerTestSender?: Sender };

/** The dashboard process's sender: the same code and SSRF guard as the worker's, a few connections per origin. */
function sender(): Sender {
  g.__hookledgerTestSender ??= new Sender({ allowPrivate: privateTargetsAllowed(), connectionsPerOrigin: 4 });
  return g.__hookledgerTestSender;
}

const newId = () => `tst_${(Date.now() * 1000).toString(16).padStart(14, "0")}${randomBytes(6).toString("hex")}`;

/**
 * The catalog's example of `type` as the endpoint would receive a real event of it (the envelope of lib/events/publish.ts
 * envelopeBytes), under the test's own id, so a district sees its handler take that type before any real one arrives.
 * Only a type the subscription takes, and that has an example: 400 saying which it could send instead.
 */
async function exampleBody(prisma: PrismaClient, sub: { id: string; eventTypes: string[] }, type: string, id: string): Promise<Buffer> {
  if (!sub.eventTypes.includes("*") && !sub.eventTypes.includes(type))
    throw new AppError(
      "bad_request",
      `${sub.id} does not take ${type}, so it would never receive one; test one of its types (${sub.eventTypes.join(", ")}) or add ${type} to them.`,
      [{ path: "body.eventType", message: `not one of ${sub.id}'s event types` }],
    );
  const row = await prisma.eventType.findUnique({ where: { type }, select: { example: true } });
  if (!row)
    throw new AppError(
      "not_found",
      `Event type ${type} is not in the event catalog, so there is no example of it to send; send a ping, or one of ${sub.id}'s events by id.`,
    );
  if (row.example === null)
    throw new AppError("bad_request", `The event catalog has no example of ${type}; send a ping, or one of ${sub.id}'s events by id.`, [
      { path: "body.eventType", message: `${type} has no example in the catalog` },
    ]);
  return Buffer.from(JSON.stringify({ id, type, timestamp: new Date().toISOString(), data: row.example }), "utf8");
}

export async function sendTest(
  prisma: PrismaClient,
  subscriptionId: string,
  input: { eventId?: string; eventType?: string },
  principal: Principal,
): Promise<TestSendView> {
  const sub = await prisma.subscription.findUnique({
    where: { id: subscriptionId },
    select: { id: true, url: true, retryPolicy: true, endpointHeaders: true, endpointTls: true, eventTypes: true },
  });
  if (!sub) throw notFound("Subscription", subscriptionId);
  if ((await testSendsSince(ledgerDb(), subscriptionId, 60)) >= TEST_SENDS_PER_MINUTE)
    throw new AppError("rate_limited", `${subscriptionId} had ${TEST_SENDS_PER_MINUTE} test sends in the last minute; wait a minute before sending another.`);
  let event: { id: string | null; type: string; payload: Buffer };
  const id = newId();
  if (input.eventId) {
    const e = await eventForTestSend(ledgerDb(), subscriptionId, input.eventId);
    if (!e) throw new AppError("not_found", `Event ${input.eventId} was never delivered to ${subscriptionId}; a test re-sends only this subscription's own events.`);
    // An erased or expunged event holds only its tombstone: sending that would put the tombstone's bytes on the wire as the event.
    const t = (await findEventTombstones(ledgerDb(), [e.id])).get(e.id);
    if (t)
      throw new AppError("conflict", `Event ${e.id} cannot be sent as a test: ${tombstoneSentence(t)}. Nothing is left to send; test with a ping (no event) instead.`, {
        tombstone: t.tombstone,
        erasureId: t.erasureId,
      });
    event = e;
  } else if (input.eventType) {
    event = { id: null, type: input.eventType, payload: await exampleBody(prisma, sub, input.eventType, id) };
  } else {
    event = { id: null, type: PING_TYPE, payload: pingBody(id, subscriptionId, "test") };
  }
  const now = new Date();
  const stored = await prisma.subscriptionSecret.findMany({
    where: { subscriptionId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
  });
  if (stored.length === 0)
    throw new AppError("conflict", `Subscription ${subscriptionId} has no valid signing secret; rotate one before testing (hookledger never sends unsigned).`);
  const secrets = stored.map((s) => openSecret(s.secret, s));
  const auth = openEndpointAuth(subscriptionId, { headers: sub.endpointHeaders, tls: sub.endpointTls });

  // The check above answers most refusals cheaply; this one is exact: the count and the row that takes
  // this send's place are one step under a per-subscription lock (lib/ledger/sql/test-send.ts), so a
  // parallel burst gets exactly the limit's sends while they are in flight.
  const placed = { id, subscriptionId, actor: principal.actor, eventId: event.id, eventType: event.type, url: sub.url };
  if (!(await prisma.$transaction((tx) => reserveTestSend(tx, placed, TEST_SENDS_PER_MINUTE, 60))))
    throw new AppError("rate_limited", `${subscriptionId} had ${TEST_SENDS_PER_MINUTE} test sends in the last minute; wait a minute before sending another.`);

  const res = await sender().send({
    url: sub.url,
    deliveryKey: id,
    body: event.payload,
    secrets,
    timeoutMs: parseRetryPolicy(sub.retryPolicy).timeoutMs,
    headers: { ...auth.headers, [TEST_HEADER]: "1" },
    tls: auth.tls,
  });
  // An endpoint that echoes its request must not put the credential (a header's, or the URL's own) into the database or the page.
  const credentials = [...Object.values(auth.headers), ...urlSecrets(sub.url)];
  const record = await prisma.$transaction(async (tx) => {
    const r = await finishTestSend(tx, {
      ...placed,
      statusCode: res.statusCode,
      errorClass: res.errorClass,
      // "Redirect to <Location> not followed.": a Location may echo the credential as well.
      errorMessage: redactSecrets(res.errorMessage, credentials),
      durationMs: res.durationMs,
      responseHeaders: res.responseHeaders ? Object.fromEntries(Object.entries(res.responseHeaders).map(([k, v]) => [k, redactSecrets(v, credentials)!])) : null,
      responseExcerpt: redactSecrets(res.responseExcerpt, credentials),
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "subscription.test",
      targetType: "subscription",
      targetId: subscriptionId,
      details: { testSendId: id, eventId: event.id, eventType: event.type, statusCode: res.statusCode, errorClass: res.errorClass, durationMs: res.durationMs },
    });
    return r;
  });
  return toTestSendView(record);
}

export async function recentTestSends(prisma: PrismaClient, subscriptionId: string, limit = 20): Promise<TestSendView[]> {
  const sub = await prisma.subscription.findUnique({ where: { id: subscriptionId }, select: { id: true } });
  if (!sub) throw notFound("Subscription", subscriptionId);
  return (await listTestSends(ledgerDb(), subscriptionId, limit)).map(toTestSendView);
}
