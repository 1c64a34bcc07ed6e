// The Success tiles are counted each minute, the "Failing since" header from the attempts themselves: for up to a
// minute the tile says it is behind ("0 attempts counted yet"), never "0 of 0 attempts" beside "its last 4 attempts
// all failed".
import { describe, expect, it } from "vitest";
import { outcomesEmptyWords, windowHint, windowLags } from "@/components/subscriptions/window-hint";

const now = Date.parse("2026-12-06T18:30:00Z");
const HOUR = 3600_000;

describe("a Success tile beside the live attempts", () => {
  it("says it is counted each minute while it counts fewer attempts than the header names", () => {
    const last = { failed: 4, failedSince: "2026-12-06T18:29:10Z", deliveredAt: null };
    const w = { attempts: 0, delivered: 0 };
    expect(windowLags(w, last, HOUR, now)).toBe(true);
    expect(windowHint(w, true)).toBe("0 attempts counted yet (counted each minute)");
    expect(windowHint({ attempts: 2, delivered: 0 }, windowLags({ attempts: 2, delivered: 0 }, last, HOUR, now))).toBe(
      "0 of 2 attempts counted so far (counted each minute)",
    );
  });

  it("reads as before once the counts have caught up, or when the run began before the window", () => {
    const last = { failed: 4, failedSince: "2026-12-06T18:29:10Z", deliveredAt: "2026-12-06T18:20:00Z" };
    expect(windowLags({ attempts: 5, delivered: 1 }, last, HOUR, now)).toBe(false);
    expect(windowHint({ attempts: 5, delivered: 1 }, false)).toBe("1 of 5 attempts");
    // A run that began two hours ago: the hour's count may rightly be below the run's length.
    expect(windowLags({ attempts: 1, delivered: 0 }, { failed: 40, failedSince: "2026-12-06T16:30:00Z", deliveredAt: null }, HOUR, now)).toBe(false);
  });
});

describe("the outcomes chart beside the live attempts", () => {
  it("says the newest attempts are on their way while they are not counted yet, not that there are none", () => {
    const last = { failed: 4, failedSince: "2026-12-06T18:29:10Z", deliveredAt: null };
    expect(outcomesEmptyWords(windowLags({ attempts: 0, delivered: 0 }, last, HOUR, now))).toBe("The newest attempts are counted each minute; they show here shortly.");
    // No attempt anywhere: the chart has none to wait for.
    expect(outcomesEmptyWords(windowLags({ attempts: 0, delivered: 0 }, { failed: 0, failedSince: null, deliveredAt: null }, HOUR, now))).toBe(
      "No attempts in this range.",
    );
  });
});
