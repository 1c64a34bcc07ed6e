// An attempt whose worker stopped before it recorded the answer (error class lease_expired or shutdown), in the
// words of the lookup card, the delivery page and the receipt: sending was interrupted and the endpoint may have
// received it, never "lease expired", "worker shut down" or the class's own name, which a district cannot read. And
// an attempt with neither an answer nor an error class: the receipt says no answer was recorded, never "(unknown)".
import { describe, expect, it } from "vitest";
import { answerOf, deliveryReceipt, describeDelivery, type DeliveryLite } from "../../lib/dashboard/describe";
import { ATTEMPT_OUTCOME_SENTENCES, ERROR_CLASS_LABELS } from "../../components/ui/labels";
import { ERROR_CLASS_WORDS } from "../../lib/ledger/states";

const utc = (iso: string) => iso.slice(11, 19);
const JARGON = /lease|worker|_/i;

function delivery(over: Partial<DeliveryLite>, errorClass: "lease_expired" | "shutdown" = "lease_expired"): DeliveryLite {
  return {
    id: "dlv_1",
    deliveryKey: "msg_1",
    eventId: "evt_1",
    eventType: "assignment.graded",
    subscriptionId: "sub_1",
    subscriptionName: "Lincoln SIS",
    tenant: "lincoln",
    subscriptionState: "active",
    state: "scheduled",
    attemptCount: 1,
    totalAttempts: 1,
    maxAttempts: 7,
    nextAttemptAt: "2026-12-06T07:52:00.000Z",
    lastAttemptAt: "2026-12-06T07:50:00.000Z",
    lastStatusCode: null,
    lastErrorClass: errorClass,
    lastErrorMessage: null,
    deadLetterReason: null,
    deadLetteredAt: null,
    deliveredAt: null,
    createdAt: "2026-12-06T07:49:00.000Z",
    sending: null,
    resolution: null,
    attempts: [
      {
        id: "att_1",
        attemptNumber: 1,
        trigger: "scheduled",
        actor: null,
        startedAt: "2026-12-06T07:50:00.000Z",
        durationMs: null,
        outcome: "abandoned",
        statusCode: null,
        errorClass,
        errorMessage: null,
        retryAfterSeconds: null,
        responseHeaders: null,
        responseExcerpt: null,
        workerId: "box:4242:dead",
        ambiguous: true,
      },
    ],
    ...over,
  };
}

describe("an attempt whose sending was interrupted", () => {
  it("is said as interrupted, in the dashboard's words, wherever an error class is named", () => {
    expect(ERROR_CLASS_WORDS.lease_expired).toBe("sending interrupted");
    expect(ERROR_CLASS_WORDS.shutdown).toBe("sending interrupted by a shutdown");
    expect(ERROR_CLASS_LABELS.lease_expired).not.toMatch(JARGON);
    expect(ATTEMPT_OUTCOME_SENTENCES.abandoned).toBe("Abandoned: sending was interrupted before an answer was recorded; the endpoint may have received it");
    expect(answerOf(null, "lease_expired")).toBe("none recorded (sending interrupted)");
    expect(answerOf(null, "shutdown")).toBe("none recorded (sending interrupted by a shutdown)");
  });

  it("a retrying delivery's lookup card says no answer was recorded, not that a lease expired", () => {
    for (const cls of ["lease_expired", "shutdown"] as const) {
      const text = describeDelivery(delivery({}, cls), utc).text;
      expect(text).toMatch(/^Retrying: attempt 2 of 7, next at 07:52:00, last answer none recorded \(sending interrupted( by a shutdown)?\)$/);
      expect(text).not.toMatch(JARGON);
    }
    const held = describeDelivery(delivery({ subscriptionState: "paused" }), utc).text;
    expect(held).toBe("Held: Lincoln SIS is paused; attempt 2 of 7 will be made when the subscription is resumed, last answer none recorded (sending interrupted)");
  });

  it("a dead letter whose every attempt was interrupted says the endpoint may have received it", () => {
    const d = delivery({ state: "dead_letter", nextAttemptAt: null, deadLetterReason: "abandoned", deadLetteredAt: "2026-12-06T08:00:00.000Z" });
    const text = describeDelivery(d, utc).text;
    expect(text).toBe("Not delivered: Lincoln SIS may have received it, but no answer was recorded (sending was interrupted every time) at 08:00:00");
    expect(text).not.toMatch(JARGON);
  });

  it("the receipt's sentences and attempt lines say it in words, with the codes only under 'For our engineers'", () => {
    const receipt = deliveryReceipt(delivery({}), utc);
    const sentences = receipt.slice(0, receipt.indexOf("For our engineers:"));
    expect(sentences).toContain("Lincoln SIS may have received it, but no answer was recorded on 07:50:00; we will try again at 07:52:00 automatically.");
    expect(sentences).toContain(
      "- Attempt 1 on 07:50:00: sending interrupted before an answer was recorded (it may have been received), to be sent again if attempts remain.",
    );
    expect(sentences).not.toMatch(/lease|worker/i);
  });
});

describe("an attempt with no answer and no error class", () => {
  const bare = (errorMessage: string | null): DeliveryLite => {
    const d = delivery({ lastErrorClass: null });
    return { ...d, attempts: [{ ...d.attempts[0], outcome: "retry" as const, errorClass: null, errorMessage, ambiguous: false }] };
  };

  it("the card's line says the last answer was none recorded, not 'no answer'", () => {
    expect(describeDelivery(bare(null), utc).text).toMatch(/, last answer none recorded$/);
  });

  it("the receipt says no answer was recorded, with the stored message when there is one, not '(unknown)'", () => {
    expect(deliveryReceipt(bare(null), utc)).toContain("- Attempt 1 on 07:50:00: no answer recorded, will be retried.");
    expect(deliveryReceipt(bare("socket closed by peer"), utc)).toContain("- Attempt 1 on 07:50:00: no answer recorded “socket closed by peer”, will be retried.");
    expect(deliveryReceipt(bare(null), utc)).not.toContain("unknown");
  });
});
