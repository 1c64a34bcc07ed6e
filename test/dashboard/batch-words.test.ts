// A batch sent again, as a district reads its selection: its subscription by the name it gave it and the reason in
// words, never "subscription sub_…" or the ledger's reason; an engineer keeps the filter's own terms. Its status in
// words too: "Sending", "Finished", never the stored "running" or "done".
import { describe, expect, it } from "vitest";
import { batchStatusText, describeBatch, statusInWords, statusStyleKey, stillOnTheirWay } from "@/components/redrive/batch-kind";

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

describe("a batch's status in the viewer's words", () => {
  it("says what is happening to a district, and keeps the batch page's words for an engineer", () => {
    const states = ["running", "done", "cancelled"];
    expect(states.map((s) => statusInWords(s, { district: true }))).toEqual(["Sending", "Finished", "Cancelled"]);
    expect(states.map((s) => statusInWords(s))).toEqual(["Running", "Done", "Cancelled"]);
  });

  it("shows a status it has no words for as it is stored, rather than nothing", () => {
    expect(statusInWords("paused", { district: true })).toBe("paused");
  });
});

describe("a batch's status on its page", () => {
  const b = { matched: 30_000, redriven: 30_000, skipped: 0 };
  it("says a done batch whose deliveries are still queued is still on its way, not Done or Finished", () => {
    expect(batchStatusText({ ...b, status: "done", inProgress: 11_396 })).toBe("Done: 11,396 still on their way");
    expect(batchStatusText({ ...b, status: "done", inProgress: 11_396 }, { district: true })).toBe("Sending: 11,396 still on their way");
  });

  it("says Done or Finished once nothing it sent is on its way, and counts a running batch's handled items", () => {
    expect(batchStatusText({ ...b, status: "done", inProgress: 0 })).toBe("Done");
    expect(batchStatusText({ ...b, status: "done", inProgress: 0 }, { district: true })).toBe("Finished");
    expect(batchStatusText({ ...b, redriven: 3_372, status: "running", inProgress: 2_052 })).toBe("Running: 3,372 of 30,000 handled");
    expect(batchStatusText({ ...b, redriven: 832, status: "cancelled", inProgress: 0 })).toBe("Cancelled");
    expect(batchStatusText({ ...b, redriven: 832, status: "cancelled", inProgress: 0 }, { district: true })).toBe("Cancelled");
  });

  it("says a cancelled batch whose already moved deliveries are still being sent is still on its way, not just Cancelled", () => {
    expect(batchStatusText({ ...b, redriven: 832, status: "cancelled", inProgress: 5 })).toBe("Cancelled: 5 still on their way");
    // Not "Sending" for a district: nothing more of it is being sent again, only what already was.
    expect(batchStatusText({ ...b, redriven: 832, status: "cancelled", inProgress: 5 }, { district: true })).toBe("Cancelled: 5 still on their way");
  });
});

describe("a done batch still on its way, on its page and in the list", () => {
  const b = { matched: 30_000, redriven: 30_000, skipped: 0 };
  it("is one test for both: still on its way while any of its deliveries is, and looks like a running batch", () => {
    expect(stillOnTheirWay({ status: "done", inProgress: 4 })).toBe(true);
    expect(statusStyleKey({ status: "done", inProgress: 4 })).toBe("running");
    expect(stillOnTheirWay({ status: "done", inProgress: 0 })).toBe(false);
    expect(statusStyleKey({ status: "done", inProgress: 0 })).toBe("done");
    // A cancelled batch still on its way keeps the cancelled pill: it is not running.
    expect(stillOnTheirWay({ status: "cancelled", inProgress: 5 })).toBe(true);
    expect(statusStyleKey({ status: "cancelled", inProgress: 5 })).toBe("cancelled");
    expect(stillOnTheirWay({ status: "cancelled", inProgress: 0 })).toBe(false);
  });

  it("reads the list's answer, where a running batch's inProgress is not counted (null)", () => {
    expect(batchStatusText({ ...b, status: "done", inProgress: 4 })).toBe("Done: 4 still on their way");
    expect(batchStatusText({ ...b, status: "done", inProgress: 4 }, { district: true })).toBe("Sending: 4 still on their way");
    expect(batchStatusText({ ...b, status: "cancelled", inProgress: 3 })).toBe("Cancelled: 3 still on their way");
    expect(batchStatusText({ ...b, status: "cancelled", inProgress: 0 })).toBe("Cancelled");
    expect(stillOnTheirWay({ status: "running", inProgress: null })).toBe(false);
  });
});
