// A notice's "last answer" line, which a district's contacts read by e-mail: an error class in the dashboard's words
// ("connection refused", not "connect_refused"), and an attempt whose sending was interrupted said as such, never
// with hookledger's own message about its worker's lease.
import { describe, expect, it } from "vitest";
import { composeNotice } from "../../lib/notify/messages";
import type { NoticeContext } from "../../lib/ledger/sql/notifications";

const context = (last: Pick<NoticeContext, "lastErrorClass" | "lastErrorMessage">): NoticeContext => ({
  subscriptionId: "sub_lincoln",
  subscriptionName: "Lincoln SIS",
  url: "https://sis.lincoln.example/hooks",
  tenant: "lincoln",
  tenantName: "Lincoln USD",
  state: "paused",
  stateReason: "failing",
  failingSince: new Date("2026-12-06T07:44:31Z"),
  probeIntervalSeconds: 900,
  emails: ["it@lincoln.example"],
  webhookUrl: null,
  lastStatus: null,
  lastExcerpt: null,
  lastAt: new Date("2026-12-06T08:00:00Z"),
  ...last,
});
const answerLine = (last: Pick<NoticeContext, "lastErrorClass" | "lastErrorMessage">) =>
  composeNotice("paused", context(last), {}, "https://hookledger.example/subscriptions/sub_lincoln")
    .body.split("\n")
    .find((l) => l.startsWith("Its last answer"));

describe("a notice's last answer", () => {
  it("names the error class in words", () => {
    expect(answerLine({ lastErrorClass: "connect_refused", lastErrorMessage: "ECONNREFUSED: connect ECONNREFUSED 10.0.0.7:443" })).toBe(
      "Its last answer: it did not answer (connection refused: nothing was listening at 10.0.0.7:443) at 2026-12-06 08:00 UTC.",
    );
    expect(answerLine({ lastErrorClass: "dns", lastErrorMessage: "ENOTFOUND: getaddrinfo ENOTFOUND sis.lincoln.example" })).toBe(
      "Its last answer: it did not answer (DNS failure: the name sis.lincoln.example could not be found) at 2026-12-06 08:00 UTC.",
    );
    // A message no words here cover is kept as it came.
    expect(answerLine({ lastErrorClass: "network", lastErrorMessage: "EPROTO: something odd" })).toBe(
      "Its last answer: it did not answer (other network error: EPROTO: something odd) at 2026-12-06 08:00 UTC.",
    );
  });

  it("says an interrupted send may have been answered, without the lease or the worker", () => {
    for (const cls of ["lease_expired", "shutdown"]) {
      const line = answerLine({
        lastErrorClass: cls,
        lastErrorMessage: "The lease expired before a result was written: the worker crashed or stalled; the request may have been sent (worker box:4242:x)",
      });
      expect(line).toBe("Its last answer: it may have answered, but no answer was recorded (sending was interrupted) at 2026-12-06 08:00 UTC.");
    }
  });
});
