// The lookup's answer in the user's words: each delivery
// carries its event's subject, any subject value finds it, a failure says who
// answered what (the status once, the receiver's words quoted from the last
// attempt), the receipt is plain sentences with the ids below, and an event no
// subscription took is told apart from one never received.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { aboutEvent, answerOf, deliveryReceipt, describeDelivery, quoteAnswer } from "../../lib/dashboard/describe";
import { deliveryKey } from "../../lib/ledger/delivery-key";

let db: TestDb;
const ids: Record<string, string> = {};
const utc = (iso: string) => new Date(iso).toISOString().slice(11, 19);
const subject = { tenant: "maplegrove", studentId: "stu_map1075", assignmentId: "asg_110", term_id: "T1" };

beforeAll(async () => {
  db = await createTestDatabase();
  const p = db.pool;
  await seedSubscription(p, { id: "sub_maple", name: "Maple Grove Public Schools", tenant: "maplegrove" });
  await seedEvent(p, { id: "evt_json", subject });
  ids.json = await seedDelivery(p, {
    subscriptionId: "sub_maple",
    eventId: "evt_json",
    state: "dead_letter",
    reason: "permanent",
    attempts: [{ at: minutesAgo(3), status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 60, excerpt: '{"error":"missing field term_id"}' }],
  });
  // What the worker writes as the message of an HTTP failure: the status again (lib/ledger/outcome.ts).
  await p.query(`UPDATE deliveries SET last_error_message = 'HTTP 422' WHERE id = $1`, [ids.json]);
  await seedEvent(p, { id: "evt_ok", subject: { tenant: "maplegrove", studentId: "stu_map1075", assignmentId: "asg_101" } });
  ids.ok = await seedDelivery(p, {
    subscriptionId: "sub_maple",
    eventId: "evt_ok",
    state: "delivered",
    attempts: [
      { at: minutesAgo(30), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 900, excerpt: "Service Unavailable" },
      { at: minutesAgo(29), status: 200, outcome: "delivered", ms: 18 },
    ],
  });
  // Nothing listening at the endpoint's address: what the sender stores is Node's error (lib/net/sender.ts).
  await seedEvent(p, { id: "evt_refused", subject: { tenant: "maplegrove", studentId: "stu_map2040", assignmentId: "asg_120" } });
  await seedDelivery(p, {
    subscriptionId: "sub_maple",
    eventId: "evt_refused",
    state: "scheduled",
    nextAttemptAt: new Date(Date.now() + 60_000),
    attempts: [{ at: minutesAgo(1), errorClass: "connect_refused", outcome: "retry", ms: 3, excerpt: "connect ECONNREFUSED 127.0.0.1:4801" }],
  });
  // Published, but no subscription took it: no delivery at all.
  await seedEvent(p, { id: "evt_unrouted", subject: { tenant: "lincoln", studentId: "stu_555", term_id: "T2" } });
  // The same for a student who has deliveries too: found by its id (a value common to many events is not read twice).
  await seedEvent(p, { id: "evt_unrouted_map", type: "attendance.recorded", subject: { tenant: "maplegrove", studentId: "stu_map1075" } });
});
afterAll(async () => db?.close());

describe("lookup by subject", () => {
  it("each delivery carries its event's subject, and any subject value (or key:value) finds it", async () => {
    for (const q of ["asg_110", "T1", "term_id:T1"]) {
      const r = await findLookupResults({ q });
      expect(r.deliveries.map((d) => d.id)).toEqual([ids.json]);
      expect(r.deliveries[0].subject).toEqual(subject);
    }
    expect((await findLookupResults({ q: "stu_map1075" })).deliveries.map((d) => d.eventId).sort()).toEqual(["evt_json", "evt_ok"]);
  });

  it("an event no subscription took is answered as received, not as nothing; within the caller's district only; by subject value when nothing was delivered", async () => {
    for (const q of ["stu_555", "evt_unrouted"]) {
      const r = await findLookupResults({ q });
      expect(r.deliveries).toEqual([]);
      expect(r.unrouted).toEqual([
        {
          id: "evt_unrouted",
          type: "assignment.graded",
          tenant: "lincoln",
          receivedAt: expect.any(String),
          subject: { tenant: "lincoln", studentId: "stu_555", term_id: "T2" },
        },
      ]);
    }
    expect((await findLookupResults({ q: "stu_555" }, undefined, { tenantId: "maplegrove" })).unrouted).toEqual([]);
    expect((await findLookupResults({ q: "stu_555" }, undefined, { tenantId: "lincoln" })).unrouted).toHaveLength(1);
    expect((await findLookupResults({ q: "stu_map1075" })).unrouted).toEqual([]);
    expect((await findLookupResults({ q: "evt_unrouted_map" })).unrouted).toMatchObject([{ id: "evt_unrouted_map", type: "attendance.recorded", tenant: "maplegrove" }]);
    expect((await findLookupResults({ q: "nobody_at_all" })).unrouted).toEqual([]);
  });
});

describe("who said what", () => {
  it("a failure names the district, its status once and its own words, the reason and the time", async () => {
    const d = (await findLookupResults({ q: "evt_json" })).deliveries[0];
    const text = describeDelivery(d, utc).text;
    expect(text).toMatch(/^Not delivered: Maple Grove Public Schools answered HTTP 422 “missing field term_id” \(permanent\) at \d\d:\d\d:\d\d$/);
    expect(text).not.toMatch(/422 HTTP 422/);
    expect(aboutEvent(d.eventType, d.subject)).toBe("Assignment graded for student stu_map1075, assignment asg_110, term T1");
  });

  it("answers show the status once and quote the receiver's message", () => {
    expect(answerOf(503, "http_5xx", "HTTP 503")).toBe("HTTP 503");
    expect(answerOf(503, "http_5xx", "503 Service Unavailable: upstream down")).toBe("HTTP 503 Service Unavailable: upstream down");
    expect(answerOf(null, "timeout", null)).toBe("timeout");
    expect(quoteAnswer('{"errors":[{"message":"term_id is required"}]}')).toBe("“term_id is required”");
    expect(quoteAnswer('{"detail": "Student  not\\n enrolled"}')).toBe("“Student not enrolled”");
    expect(quoteAnswer('{"error": "cut off here')).toBe('“{"error": "cut off here”');
    expect(quoteAnswer("HTTP 503")).toBeNull();
    // A PHP error page and a proxy's page: their words, not their markup.
    expect(quoteAnswer("<br />\n<b>Fatal error</b>:  Uncaught mysqli_sql_exception: You have an error in your SQL syntax near &#39;O&#39;Brien&#39;")).toBe(
      "“Fatal error: Uncaught mysqli_sql_exception: You have an error in your SQL syntax near 'O'Brien'”",
    );
    expect(quoteAnswer("<html><head><title>502 Bad Gateway</title><style>body{}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>")).toBe(
      "“502 Bad Gateway”",
    );
    expect(quoteAnswer("<html><body><script>var x = 1 < 2;</script><p>Down for maintenance &amp; upgrades</p></body></html>")).toBe("“Down for maintenance & upgrades”");
    expect(quoteAnswer("a < b and c > d")).toBe("“a < b and c > d”");
    expect(quoteAnswer("x".repeat(300))).toHaveLength(122);
  });
});

describe("a paused subscription's retry", () => {
  it("is held, not retrying: the card and the receipt say it waits for the subscription to be resumed", async () => {
    const p = db.pool;
    await seedSubscription(p, { id: "sub_paused", name: "Birch Hill Schools", tenant: "birchhill", state: "paused" });
    await seedEvent(p, { id: "evt_held", subject: { tenant: "birchhill", studentId: "stu_held" } });
    await seedDelivery(p, {
      subscriptionId: "sub_paused",
      eventId: "evt_held",
      state: "scheduled",
      nextAttemptAt: new Date(Date.now() + 60_000),
      attempts: [{ at: minutesAgo(2), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 80, excerpt: "down" }],
    });
    const d = (await findLookupResults({ q: "stu_held" })).deliveries[0];
    expect(describeDelivery(d, utc)).toEqual({
      tone: "held",
      text: `Held: Birch Hill Schools is paused; attempt 2 of ${d.maxAttempts} will be made when the subscription is resumed, last answer HTTP 503`,
    });
    expect(deliveryReceipt(d, utc)).toContain("sending to Birch Hill Schools is paused, and it will be tried again when sending resumes.");
  });
});

describe("a send with no answer recorded", () => {
  it("an in-flight delivery past its request time says so, and when it is taken back; a fresh one is sending now", async () => {
    const p = db.pool;
    await seedEvent(p, { id: "evt_stalled", subject: { tenant: "maplegrove", studentId: "stu_stall" } });
    await seedEvent(p, { id: "evt_fresh", subject: { tenant: "maplegrove", studentId: "stu_fresh" } });
    const stalled = await seedDelivery(p, { subscriptionId: "sub_maple", eventId: "evt_stalled", state: "pending" });
    const fresh = await seedDelivery(p, { subscriptionId: "sub_maple", eventId: "evt_fresh", state: "pending" });
    // As a claim leaves them: a worker holds each until its lease ends (the timeout, 15 s by default, plus the slack).
    // The first was claimed 40 s ago by a worker that was then killed; the second just now.
    await p.query(
      `UPDATE deliveries SET state = 'in_flight', lease_owner = 'w_gone', leased_at = now() - interval '40 seconds',
              lease_until = now() + interval '5 seconds' WHERE id = $1`,
      [stalled],
    );
    await p.query(`UPDATE deliveries SET state = 'in_flight', lease_owner = 'w_live', leased_at = now(), lease_until = now() + interval '45 seconds' WHERE id = $1`, [
      fresh,
    ]);

    const s = (await findLookupResults({ q: "stu_stall" })).deliveries[0];
    expect(s.id).toBe(stalled);
    expect(s.sending).toMatchObject({ overdue: true });
    const said = describeDelivery(s, utc);
    expect(said.text).toBe(
      `No answer recorded: attempt 1 of ${s.maxAttempts} to Maple Grove Public Schools began at ${utc(s.sending!.since)} and its time is up, as when sending is interrupted. If no result comes, it is taken back at ${utc(s.sending!.takenBackAt)} and sent again, with the same delivery key`,
    );
    expect(deliveryReceipt(s, utc)).toContain(
      `It is being sent to Maple Grove Public Schools, and no answer has been recorded yet; if none comes, it will be sent again automatically after ${utc(s.sending!.takenBackAt)}.`,
    );

    const f = (await findLookupResults({ q: "stu_fresh" })).deliveries[0];
    expect(f.sending).toMatchObject({ overdue: false });
    expect(describeDelivery(f, utc).text).toBe(`Sending now: attempt 1 of ${f.maxAttempts} to Maple Grove Public Schools`);
  });
});

describe("the receipt", () => {
  it("is plain sentences a parent can read, the ids below, never the payload", async () => {
    const ok = (await findLookupResults({ q: "evt_ok" })).deliveries[0];
    const text = deliveryReceipt(ok, (s) => s);
    const [plain, forEngineers] = text.split("For our engineers:");
    expect(plain).toMatch(/^Assignment graded for student stu_map1075, assignment asg_101, sent to Maple Grove Public Schools \(district maplegrove\)\.\n/);
    expect(plain).toContain("It was delivered to Maple Grove Public Schools on ");
    expect(plain).toContain("after 2 attempts: their system accepted it.");
    expect(plain).toMatch(/- Attempt 1 on .*: answered HTTP 503 “Service Unavailable”, will be retried\./);
    expect(plain).toMatch(/- Attempt 2 on .*: answered HTTP 200, accepted\./);
    expect(forEngineers).toContain(`Delivery key (webhook-id): ${deliveryKey("sub_maple", "evt_ok")}`);
    expect(forEngineers).toContain("Event id: evt_ok (assignment.graded)");
    expect(forEngineers).toContain(`Delivery id: ${ok.id}`);
    expect(text).not.toContain("score");
  });

  it("a dead letter's receipt quotes the district and says what happens next, with no internal codes", async () => {
    const d = (await findLookupResults({ q: "evt_json" })).deliveries[0];
    const [plain] = deliveryReceipt(d, (s) => s).split("For our engineers:");
    expect(plain).toContain("It was not delivered. Maple Grove Public Schools answered HTTP 422 “missing field term_id” on ");
    expect(plain).toContain("sending the same data again will not help");
    expect(plain).toContain("- Attempt 1 on ");
    expect(plain).not.toMatch(/dead_letter|http_4xx|dead-letter|permanent/);
  });

  it("an attempt no one answered reads as the card says it, with the address that refused", async () => {
    const d = (await findLookupResults({ q: "evt_refused" })).deliveries[0];
    const [plain] = deliveryReceipt(d, (s) => s).split("For our engineers:");
    // The card's sentence (and the receipt's first): the attempt lines below it say the same.
    expect(plain).toContain("It has not been delivered yet. Maple Grove Public Schools did not answer (connection refused: nothing was listening at 127.0.0.1:4801) on ");
    expect(plain).toMatch(/- Attempt 1 on .*: did not answer \(connection refused: nothing was listening at 127\.0\.0\.1:4801\), will be retried\./);
    expect(plain).not.toContain("ECONNREFUSED");
  });
});
