// lib/ledger/outcome.ts: what happens to an attempt's result, in one pure function.
import { describe, expect, it } from "vitest";
import { attemptOutcome, type OutcomeInput } from "../../lib/ledger/outcome";
import { parseRetryPolicy } from "../../lib/ledger/retry-policy";
import type { SendResult } from "../../lib/ledger/classify";

const now = new Date("2026-03-02T10:00:00.000Z");
const policy = parseRetryPolicy({}); // ladder 30 s, 2 m, 10 m, 1 h, 6 h, 24 h; 7 attempts; 3 days

const answer = (statusCode: number, retryAfter: string | null = null): SendResult => ({
  outcome: "response",
  statusCode,
  errorClass: null,
  errorMessage: null,
  retryAfter,
  durationMs: 12,
  responseExcerpt: null,
  responseHeaders: null,
  ambiguous: false,
});
const failure = (errorClass: SendResult["errorClass"], errorMessage: string, ambiguous: boolean): SendResult => ({
  outcome: "error",
  statusCode: null,
  errorClass,
  errorMessage,
  retryAfter: null,
  durationMs: 15_000,
  responseExcerpt: null,
  responseHeaders: null,
  ambiguous,
});
const input = (result: SendResult, over: Partial<OutcomeInput> = {}): OutcomeInput => ({
  attemptCount: 0,
  runStartedAt: now.getTime() - 1000,
  result,
  policy,
  now,
  random: () => 0.5, // no jitter: 1 - 0.2 + 0.4 * 0.5 = 1
  ...over,
});
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

describe("attemptOutcome", () => {
  it("2xx: delivered, no error", () => {
    expect(attemptOutcome(input(answer(204)))).toEqual({
      state: "delivered",
      nextAttemptAt: null,
      deadLetterReason: null,
      errorClass: null,
      errorMessage: null,
      retryAfterSeconds: null,
      disablesSubscription: false,
      attemptInRun: 1,
    });
  });

  it("429 with Retry-After: retried exactly that much later, the header's seconds recorded", () => {
    const o = attemptOutcome(input(answer(429, "7")));
    expect(o).toMatchObject({ state: "scheduled", nextAttemptAt: at(7), errorClass: "http_429", errorMessage: "HTTP 429", retryAfterSeconds: 7, deadLetterReason: null });
    // As an HTTP-date, and capped at 7 days.
    expect(attemptOutcome(input(answer(429, new Date(now.getTime() + 90_000).toUTCString()))).nextAttemptAt).toEqual(at(90));
    expect(attemptOutcome(input(answer(429, "99999999"))).retryAfterSeconds).toBe(7 * 86400);
  });

  it("429 without (or with an unreadable) Retry-After: the ladder's rung, with jitter from the random source", () => {
    expect(attemptOutcome(input(answer(429))).nextAttemptAt).toEqual(at(30));
    expect(attemptOutcome(input(answer(429, "soon"))).retryAfterSeconds).toBeNull();
    expect(attemptOutcome(input(answer(429), { attemptCount: 2 })).nextAttemptAt).toEqual(at(600));
    expect(attemptOutcome(input(answer(429), { random: () => 0 })).nextAttemptAt).toEqual(at(24)); // -20 %
  });

  it("a Retry-After that would pass the run's maximum age: exhausted", () => {
    const o = attemptOutcome(input(answer(429, String(4 * 86400))));
    expect(o).toMatchObject({ state: "dead_letter", deadLetterReason: "exhausted", retryAfterSeconds: 4 * 86400 });
  });

  it("410: dead-lettered as gone, and the subscription is disabled", () => {
    expect(attemptOutcome(input(answer(410)))).toMatchObject({
      state: "dead_letter",
      deadLetterReason: "gone",
      errorClass: "http_410",
      errorMessage: "HTTP 410",
      disablesSubscription: true,
    });
  });

  it("422: dead-lettered at once as permanent, the subscription left alone", () => {
    expect(attemptOutcome(input(answer(422)))).toMatchObject({
      state: "dead_letter",
      deadLetterReason: "permanent",
      errorClass: "http_4xx",
      disablesSubscription: false,
      nextAttemptAt: null,
    });
  });

  it("a timeout (ambiguous: the request may have been applied) is retried like any transient failure", () => {
    expect(attemptOutcome(input(failure("timeout", "no answer within 15000 ms", true)))).toMatchObject({
      state: "scheduled",
      nextAttemptAt: at(30),
      errorClass: "timeout",
      errorMessage: "no answer within 15000 ms",
      retryAfterSeconds: null,
    });
  });

  it("the SSRF guard's refusal is dead-lettered as target_blocked", () => {
    expect(attemptOutcome(input(failure("target_blocked", "resolves to 127.0.0.1", false)))).toMatchObject({
      state: "dead_letter",
      deadLetterReason: "target_blocked",
    });
  });

  it("exhausted by attempts: the policy's last attempt failing dead-letters", () => {
    expect(attemptOutcome(input(answer(503), { attemptCount: 5 }))).toMatchObject({ state: "scheduled", attemptInRun: 6 });
    expect(attemptOutcome(input(answer(503), { attemptCount: 6 }))).toMatchObject({ state: "dead_letter", deadLetterReason: "exhausted", attemptInRun: 7 });
    const three = parseRetryPolicy({ maxAttempts: 3 });
    expect(attemptOutcome(input(answer(503), { attemptCount: 2, policy: three }))).toMatchObject({ state: "dead_letter", deadLetterReason: "exhausted" });
  });

  it("exhausted by age: a retry that would fall after maxAgeSeconds from the run's start dead-letters", () => {
    const short = parseRetryPolicy({ maxAgeSeconds: 60 });
    expect(attemptOutcome(input(answer(503), { policy: short, runStartedAt: now.getTime() - 20_000 }))).toMatchObject({ state: "scheduled" });
    expect(attemptOutcome(input(answer(503), { policy: short, runStartedAt: new Date(now.getTime() - 40_000) }))).toMatchObject({
      state: "dead_letter",
      deadLetterReason: "exhausted",
    });
  });

  it("classify overrides: an exact status wins over its class, either way", () => {
    const p = parseRetryPolicy({ classify: { "409": "retry", "5xx": "dead_letter", "410": "retry" } });
    expect(attemptOutcome(input(answer(409), { policy: p }))).toMatchObject({ state: "scheduled", errorClass: "http_4xx" });
    expect(attemptOutcome(input(answer(503), { policy: p }))).toMatchObject({ state: "dead_letter", deadLetterReason: "permanent", errorClass: "http_5xx" });
    // A 410 overridden to retry does not disable the subscription.
    expect(attemptOutcome(input(answer(410), { policy: p }))).toMatchObject({ state: "scheduled", disablesSubscription: false });
    // 2xx is always delivered.
    expect(attemptOutcome(input(answer(200), { policy: parseRetryPolicy({ classify: { "2xx": "dead_letter" } }) })).state).toBe("delivered");
  });
});
