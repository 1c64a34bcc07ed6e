// Grouping an endpoint's answers folds ids but keeps what tells answers apart:
// dates, durations, short numbers and the whole stored answer (Westfield's is
// not cut before it names the new endpoint). And the status is said once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription, type SeedAttempt } from "../helpers/dashboard-seed";
import { findEndpointAnswers } from "../../lib/dashboard/subscriptions";
import { answerWords, deliveryBadgeState, DELIVERY_STATE_LABELS } from "../../components/ui/labels";

let db: TestDb;
const westfield =
  "This endpoint was decommissioned on 2026-06-30.\nSend grades to https://sis.westfield.example/v2/hooks instead; requests here are refused from 2026-07-01 on.";

let n = 0;
async function answer(a: Partial<SeedAttempt> & { excerpt?: string }, errorMessage?: string) {
  const eventId = `evt_ag_${n++}`;
  await seedEvent(db.pool, { id: eventId });
  const id = await seedDelivery(db.pool, {
    subscriptionId: "sub_ag",
    eventId,
    state: "dead_letter",
    attempts: [{ at: minutesAgo(60 - n), outcome: "dead_letter", ...a }],
  });
  if (errorMessage !== undefined) await db.pool.query("UPDATE attempts SET error_message = $2, response_excerpt = NULL WHERE delivery_id = $1", [id, errorMessage]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db.pool, { id: "sub_ag", name: "Grouping" });
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "missing field term_id for stu_map1075" });
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "missing field term_id for stu_map2231" });
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "request 5f3a9c2e1b7d4a60 refused: missing field term_id at 07:36:03" });
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "request 9be2d01c44aa7f31 refused: missing field term_id at 07:41:12" });
  await answer({ status: 410, errorClass: "http_410", excerpt: westfield });
  await answer({ status: 410, errorClass: "http_410", excerpt: westfield });
  await answer({ status: null, errorClass: "timeout" }, "No answer within 10000 ms");
  await answer({ status: null, errorClass: "timeout" }, "No answer within 10000 ms");
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "missing field term_id (row 1000)" });
  await answer({ status: 422, errorClass: "http_4xx", excerpt: "missing field term_id (row 1011)" });
  await answer({ status: 400, errorClass: "http_4xx", excerpt: "payload of 20000 bytes over the 16384 bytes limit, retry after 30 s (30/06/2026)" });
  await answer({ status: 429, errorClass: "http_429", excerpt: "slow down (http_429), order 1234567 of 2026-11-30" });
}, 120_000);
afterAll(async () => db?.close());

describe("answer groups", () => {
  it("fold ids, request ids, long numbers and times of day; keep dates, durations, short numbers and the answer whole", async () => {
    const { groups, examined } = await findEndpointAnswers({ subscriptionId: "sub_ag" });
    expect(examined).toBe(12);
    const by = Object.fromEntries(groups.map((g) => [g.signature, g.count]));
    expect(by).toEqual({
      "missing field term_id for #": 2,
      "request # refused: missing field term_id at #": 2,
      "This endpoint was decommissioned on 2026-06-30. Send grades to https://sis.westfield.example/v2/hooks instead; requests here are refused from 2026-07-01 on.": 2,
      "No answer within 10000 ms": 2,
      "missing field term_id (row #)": 2,
      "payload of 20000 bytes over the 16384 bytes limit, retry after 30 s (30/06/2026)": 1,
      "slow down (http_429), order # of 2026-11-30": 1,
    });
  });
});

describe("what grouping costs", () => {
  // An endpoint chooses its answers. This one matches the folding patterns at every third character, 4 KB of it (the
  // stored excerpt), on each of the 5,000 attempts the subscription's page groups: folded whole, each poll of the page
  // took half a minute of the database's time; by its first 256 characters, under a second.
  const costly = "12:".repeat(1365);
  beforeAll(async () => {
    await seedSubscription(db.pool, { id: "sub_ag_costly", name: "Costly answers" });
    await seedEvent(db.pool, { id: "evt_ag_costly" });
    const id = await seedDelivery(db.pool, { subscriptionId: "sub_ag_costly", eventId: "evt_ag_costly", state: "scheduled", attempts: [] });
    await db.pool.query(
      `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, duration_ms, outcome, status_code, error_class, response_excerpt, worker_id)
       SELECT $1, 'sub_ag_costly', g, 'scheduled', now() - make_interval(secs => g), 5, 'retry', 500, 'http_5xx', $2 || ' ' || g, 'w-test'
         FROM generate_series(1, 5000) g`,
      [id, costly],
    );
    // Two answers alike in their first 256 characters, apart after: one group, shown by its newest answer, whole.
    await seedSubscription(db.pool, { id: "sub_ag_long", name: "Long answers" });
    await seedEvent(db.pool, { id: "evt_ag_long" });
    const head = "The importer refused this row. ".repeat(9);
    await seedDelivery(db.pool, {
      subscriptionId: "sub_ag_long",
      eventId: "evt_ag_long",
      state: "dead_letter",
      attempts: [
        { at: minutesAgo(2), outcome: "retry", status: 409, errorClass: "http_4xx", excerpt: `${head}Older tail.` },
        { at: minutesAgo(1), outcome: "dead_letter", status: 409, errorClass: "http_4xx", excerpt: `${head}Newest tail, the whole answer.` },
      ],
    });
  }, 120_000);

  it("groups an endpoint's 5,000 newest answers in well under the statement timeout, whatever they hold", async () => {
    const started = performance.now();
    const { groups, examined } = await findEndpointAnswers({ subscriptionId: "sub_ag_costly" });
    const ms = performance.now() - started;
    expect(examined).toBe(5000);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ statusCode: 500, count: 5000 });
    expect(groups[0].signature.startsWith("#:#:#")).toBe(true);
    expect(ms).toBeLessThan(5000);
  });

  it("answers alike in their first 256 characters are one group, shown by the newest whole", async () => {
    const { groups: g } = await findEndpointAnswers({ subscriptionId: "sub_ag_long" });
    expect(g).toHaveLength(1);
    expect(g[0]).toMatchObject({ count: 2, deadLettered: 1 });
    expect(g[0].signature).toMatch(/^The importer refused this row\..* Newest tail, the whole answer\.$/);
  });
});

describe("the status, said once", () => {
  it("HTTP 422 with the answer's words; never the status twice", () => {
    expect(answerWords(422, "http_4xx", "missing field term_id")).toBe("HTTP 422 “missing field term_id”");
    expect(answerWords(422, "http_4xx", "HTTP 422")).toBe("HTTP 422");
    expect(answerWords(503, "http_5xx", "503")).toBe("HTTP 503");
    expect(answerWords(500, "http_5xx", null)).toBe("HTTP 500");
    expect(answerWords(null, "timeout", "No answer within 10000 ms")).toBe("timeout “No answer within 10000 ms”");
    expect(answerWords(null, "http_429", null)).toBe("HTTP 429 (rate limited)");
    expect(answerWords(410, "http_410", "Gone\n  for good")).toBe("HTTP 410 “Gone for good”");
  });
});

describe("one vocabulary (docs/GLOSSARY.md)", () => {
  it("states carry the glossary's words, and a held delivery is badged held, never queued", () => {
    expect(DELIVERY_STATE_LABELS).toEqual({
      pending: "pending",
      in_flight: "in flight",
      scheduled: "scheduled",
      delivered: "delivered",
      dead_letter: "dead-lettered",
      resolved: "resolved",
    });
    expect(deliveryBadgeState("pending", "paused")).toBe("held");
    expect(deliveryBadgeState("scheduled", "disabled")).toBe("held");
    expect(deliveryBadgeState("pending", "active")).toBe("pending");
    expect(deliveryBadgeState("dead_letter", "paused")).toBe("dead_letter");
  });
});
