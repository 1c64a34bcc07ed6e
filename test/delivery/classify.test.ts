import { describe, expect, it } from "vitest";
import { classifyAttempt, DEAD_LETTER_REASONS, type SendResult } from "../../lib/ledger/classify";

const http = (status: number): SendResult => ({
  outcome: "response",
  statusCode: status,
  errorClass: null,
  errorMessage: null,
  retryAfter: null,
  durationMs: 1,
  responseExcerpt: null,
  responseHeaders: {},
  ambiguous: false,
});
const fail = (errorClass: SendResult["errorClass"], ambiguous = false): SendResult => ({ ...http(0), outcome: "error", statusCode: null, errorClass, ambiguous });

describe("classifyAttempt", () => {
  it("2xx is delivered", () => {
    for (const s of [200, 201, 202, 204, 299]) expect(classifyAttempt(http(s)).verdict).toBe("delivered");
  });
  it("transient statuses retry with their class", () => {
    expect(classifyAttempt(http(429))).toEqual({ verdict: "retry", errorClass: "http_429" });
    expect(classifyAttempt(http(408))).toEqual({ verdict: "retry", errorClass: "http_408" });
    expect(classifyAttempt(http(425))).toEqual({ verdict: "retry", errorClass: "http_425" });
    for (const s of [500, 502, 503, 504]) expect(classifyAttempt(http(s))).toEqual({ verdict: "retry", errorClass: "http_5xx" });
  });
  it("permanent statuses dead-letter at once", () => {
    for (const s of [400, 401, 403, 404, 409, 413, 422])
      expect(classifyAttempt(http(s))).toEqual({ verdict: "dead_letter", errorClass: "http_4xx", reason: DEAD_LETTER_REASONS.permanent });
    expect(classifyAttempt(http(301))).toEqual({ verdict: "dead_letter", errorClass: "redirect", reason: "permanent" });
    expect(classifyAttempt(http(307))).toMatchObject({ verdict: "dead_letter", errorClass: "redirect" });
  });
  it("410 is gone", () => {
    expect(classifyAttempt(http(410))).toEqual({ verdict: "dead_letter", errorClass: "http_410", reason: "gone" });
  });
  it("transport failures retry; a blocked target dead-letters", () => {
    for (const c of ["timeout", "connect_refused", "reset", "dns", "tls", "network", "connect_timeout"] as const)
      expect(classifyAttempt(fail(c, c === "timeout" || c === "reset"))).toEqual({ verdict: "retry", errorClass: c });
    expect(classifyAttempt(fail("target_blocked"))).toEqual({ verdict: "dead_letter", errorClass: "target_blocked", reason: "target_blocked" });
  });
  it("per-subscription overrides: an exact status wins over a class", () => {
    const o = { "409": "retry", "4xx": "dead_letter", "5xx": "dead_letter", "429": "dead_letter" } as const;
    expect(classifyAttempt(http(409), o).verdict).toBe("retry");
    expect(classifyAttempt(http(404), o).verdict).toBe("dead_letter");
    expect(classifyAttempt(http(503), o)).toEqual({ verdict: "dead_letter", errorClass: "http_5xx", reason: "permanent" });
    expect(classifyAttempt(http(429), o).verdict).toBe("dead_letter");
    expect(classifyAttempt(http(422), { "422": "retry" }).verdict).toBe("retry");
    expect(classifyAttempt(http(200), { "2xx": "dead_letter" } as never).verdict).toBe("delivered");
  });
});
