// A batch sent again, as a district reads its selection: its subscription by the name it gave it and the reason in
// words, never "subscription sub_…" or the ledger's reason; an engineer keeps the filter's own terms.
import { describe, expect, it } from "vitest";
import { describeBatch } from "@/components/redrive/batch-kind";

const fmt = (iso: string) => iso.slice(0, 16).replace("T", " ");
const names = { sub_hayes: "Hayes SIS" };

describe("a batch's selection in a district's words", () => {
  it("names the subscription and says the reason", () => {
    expect(describeBatch("redrive", { subscriptionId: "sub_hayes", deadLetterReason: "abandoned" }, fmt, { names })).toBe(
      "dead letters of Hayes SIS, reason: sending was interrupted every time",
    );
    expect(describeBatch("redrive", { subscriptionId: "sub_hayes", statusCode: 422 }, fmt, { names })).toBe("dead letters of Hayes SIS, answered HTTP 422");
    expect(describeBatch("recover", { subscriptionId: "sub_hayes", since: "2026-12-01T00:00:00Z", until: "2026-12-02T00:00:00Z" }, fmt, { names })).toBe(
      "Hayes SIS, deliveries created 2026-12-01 00:00 to 2026-12-02 00:00",
    );
  });

  it("shows an id it has no name for, and keeps an engineer's filter terms", () => {
    expect(describeBatch("redrive", { subscriptionId: "sub_gone" }, fmt, { names })).toBe("dead letters of subscription sub_gone");
    expect(describeBatch("redrive", { subscriptionId: "sub_hayes", deadLetterReason: "exhausted" }, fmt)).toBe(
      "subscription sub_hayes, dead-letter reason retries exhausted",
    );
  });
});
