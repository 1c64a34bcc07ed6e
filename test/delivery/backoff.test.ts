import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEFAULT_LADDER_SECONDS, maxAttempts, nextAttempt, parseRetryAfter, MAX_RETRY_AFTER_SECONDS } from "../../lib/ledger/backoff";

const t0 = new Date("2026-01-01T00:00:00Z");

describe("backoff", () => {
  it("the default ladder is 30 s, 2 m, 10 m, 1 h, 6 h, 24 h; a run has one try per rung plus the first", () => {
    expect([...DEFAULT_LADDER_SECONDS]).toEqual([30, 120, 600, 3600, 21600, 86400]);
    expect(maxAttempts()).toBe(7);
    expect(maxAttempts({ ladderSeconds: [1, 2] })).toBe(3);
  });

  it("each rung is jittered within ±20 %", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (n, r) => {
        const next = nextAttempt({ attemptNumber: n, runStartedAt: t0, now: t0, random: () => r });
        expect(next.kind).toBe("retry");
        if (next.kind !== "retry") return;
        const rung = DEFAULT_LADDER_SECONDS[n - 1];
        expect(next.delaySeconds).toBeGreaterThanOrEqual(rung * 0.8 - 1e-9);
        expect(next.delaySeconds).toBeLessThanOrEqual(rung * 1.2 + 1e-9);
      }),
    );
  });

  it("past the last rung is exhausted", () => {
    expect(nextAttempt({ attemptNumber: 7, runStartedAt: t0, now: t0 })).toEqual({ kind: "exhausted" });
    expect(nextAttempt({ attemptNumber: 2, runStartedAt: t0, now: t0, policy: { ladderSeconds: [1, 1] } }).kind).toBe("retry");
    expect(nextAttempt({ attemptNumber: 3, runStartedAt: t0, now: t0, policy: { ladderSeconds: [1, 1] } }).kind).toBe("exhausted");
  });

  it("Retry-After wins over the ladder, capped at 7 days", () => {
    const n = nextAttempt({ attemptNumber: 1, runStartedAt: t0, now: t0, retryAfterSeconds: 3, random: () => 0.99 });
    expect(n).toEqual({ kind: "retry", at: new Date(t0.getTime() + 3000), delaySeconds: 3 });
    const far = nextAttempt({ attemptNumber: 1, runStartedAt: t0, now: t0, retryAfterSeconds: 30 * 86400, policy: { maxAgeSeconds: 30 * 86400 } });
    expect(far.kind === "retry" && far.delaySeconds).toBe(MAX_RETRY_AFTER_SECONDS);
  });

  it("a run older than maxAgeSeconds is exhausted", () => {
    const now = new Date(t0.getTime() + 3590 * 1000);
    expect(nextAttempt({ attemptNumber: 1, runStartedAt: t0, now, policy: { maxAgeSeconds: 3600 }, random: () => 0.5 }).kind).toBe("exhausted");
    expect(nextAttempt({ attemptNumber: 1, runStartedAt: t0, now: t0, policy: { maxAgeSeconds: 3600 }, random: () => 0.5 }).kind).toBe("retry");
  });

  it("parses Retry-After as seconds or an HTTP-date", () => {
    expect(parseRetryAfter("3", t0)).toBe(3);
    expect(parseRetryAfter(" 120 ", t0)).toBe(120);
    expect(parseRetryAfter(new Date(t0.getTime() + 90_000).toUTCString(), t0)).toBe(90);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", t0)).toBe(0);
    expect(parseRetryAfter("99999999", t0)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(parseRetryAfter("soon", t0)).toBeNull();
    expect(parseRetryAfter(null, t0)).toBeNull();
    expect(parseRetryAfter("-5", t0)).toBeNull();
  });
});
