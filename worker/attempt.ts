// One delivery attempt: wait for the subscription's rate limit, get its signing
// secrets, send, and turn the answer into a result with the one outcome
// function (lib/ledger/outcome.ts). The result joins the queue the claim loop
// writes; the request's slot passes on (./slots.ts). One log line and the
// metrics per attempt.
import type client from "prom-client";
import type { Logger } from "pino";
import { maxAttempts } from "../lib/ledger/backoff";
import { attemptOutcome } from "../lib/ledger/outcome";
import { readRetryPolicy } from "../lib/ledger/retry-policy";
import { attemptDuration, attemptsTotal, schedulingLateness } from "../lib/metrics/worker";
import { memoized } from "../lib/memo";
import { redactSecrets } from "../lib/subscriptions/endpoint-auth";
import { urlSecrets } from "../lib/display-url";
import type { RateLimiter } from "./rate-limit";
import type { ResultQueue } from "./results";
import type { SecretsCache } from "./secrets";
import type { Sender } from "../lib/net/sender";
import type { InFlight, Slots } from "./slots";

export class Attempts {
  /** prom-client children per label set, so a delivery's metrics do not hash their labels each time. */
  private readonly counters = new Map<string, { total: client.Counter.Internal; duration: client.Histogram.Internal<string> }>();

  constructor(
    private readonly w: {
      log: Logger;
      sender: Sender;
      limiter: RateLimiter;
      secrets: SecretsCache;
      results: ResultQueue;
      slots: Slots;
      /** Returns a claimed row that will not be sent now to its prior state (no attempt made). */
      release: (entry: InFlight) => void;
      /** Aborted at shutdown: claimed rows not yet on the wire stay unsent (released untouched). */
      holding: AbortSignal;
      random?: () => number;
    },
  ) {}

  /** Starts the attempt; it never rejects (if it did, the lease would expire and the reaper recover the row). */
  run(entry: InFlight) {
    void this.process(entry).catch((err) => {
      this.w.log.error({ err, delivery: entry.row.id }, "unexpected error processing a delivery");
      this.w.slots.finished(entry);
    });
  }

  private count(subscription: string, outcome: string, errorClass: string, seconds: number) {
    const c = memoized(this.counters, `${subscription}\u0000${outcome}\u0000${errorClass}`, () => ({
      total: attemptsTotal.labels(subscription, outcome, errorClass),
      duration: attemptDuration.labels(outcome),
    }));
    c.total.inc();
    c.duration.observe(seconds);
  }

  private async process(entry: InFlight) {
    const { row } = entry;
    const { log, holding: hold } = this.w;
    if (row.rateLimitPerSecond && !(await this.w.limiter.take(row.subscriptionId, row.rateLimitPerSecond, hold))) return;
    const policy = readRetryPolicy(row.retryPolicy);
    const secrets = this.w.secrets.cached(row.subscriptionId) ?? (await this.w.secrets.get(row.subscriptionId, hold));
    if (hold.aborted) return; // shutting down: released unsent
    if (secrets.length === 0) {
      // Never send unsigned. The lease runs out and the reaper returns the row.
      log.error({ delivery: row.id, subscription: row.subscriptionId }, "no signing secret could be loaded; not sending");
      this.w.slots.finished(entry);
      return;
    }
    // The credentials and the URL they go to come from one read of the subscription (./secrets.ts).
    const endpoint = await this.w.secrets.endpointFor(row, hold);
    if (hold.aborted) return; // shutting down: released unsent
    if (!endpoint?.auth) {
      // Never send without the headers or certificate the endpoint was configured with. The lease runs out and the reaper returns the row.
      log.error(
        { delivery: row.id, subscription: row.subscriptionId, error: endpoint?.error },
        "the endpoint's headers or client certificate could not be opened; not sending",
      );
      this.w.slots.finished(entry);
      return;
    }
    if (this.w.limiter.backingOff(row.subscriptionId)) {
      // Its endpoint asked for time (Retry-After): back unsent, due as it was; the claim skips the subscription until then.
      this.w.release(entry);
      this.w.slots.finished(entry);
      return;
    }
    entry.started = true;
    const startedAt = new Date();
    schedulingLateness.observe(Math.max(0, (startedAt.getTime() - row.dueAt) / 1000));
    const res = await this.w.sender.send({
      url: endpoint.url,
      deliveryKey: row.deliveryKey,
      body: row.payload,
      secrets,
      timeoutMs: policy.timeoutMs,
      headers: endpoint.auth.headers,
      tls: endpoint.auth.tls,
    });
    if (res.errorClass === "shutdown") return; // released as abandoned by shutdown()

    const o = attemptOutcome({
      attemptCount: row.attemptCount,
      runStartedAt: row.runStartedAt,
      result: res,
      policy,
      now: new Date(),
      random: this.w.random,
    });
    // What the endpoint must not see stored: its header values and the credentials in its own URL (?code=, a password),
    // which a redirect echoes in its Location ("Redirect to <Location> not followed.") and an error page in its body.
    const inUrl = memoized(urlSecretsByUrl, endpoint.url, () => urlSecrets(endpoint.url));
    const credentials = inUrl.length === 0 ? Object.values(endpoint.auth.headers) : [...Object.values(endpoint.auth.headers), ...inUrl];
    const errorMessage = redactSecrets(o.errorMessage, credentials);
    this.w.results.push({
      id: row.id,
      eventAt: row.eventAt,
      claimToken: row.claimToken,
      state: o.state,
      nextAttemptAt: o.nextAttemptAt,
      statusCode: res.statusCode,
      errorClass: o.errorClass,
      errorMessage,
      deadLetterReason: o.deadLetterReason,
      startedAt,
      durationMs: res.durationMs,
      retryAfterSeconds: o.retryAfterSeconds,
      // An endpoint that echoes its request must not put its credential into the attempts table.
      ...redactAnswer(res.responseHeaders, res.responseExcerpt, credentials),
      ambiguous: res.ambiguous,
      trigger: row.trigger,
      actor: row.actor,
    });
    // Before the slot passes on: the subscription's next row must already see the endpoint's request to wait.
    if (o.retryAfterSeconds && (res.statusCode === 429 || res.statusCode === 503)) this.w.limiter.backOff(row.subscriptionId, o.retryAfterSeconds);
    this.w.slots.finished(entry);

    const outcome = o.state === "scheduled" ? "retry" : o.state;
    this.count(row.subscriptionId, outcome, o.errorClass ?? "none", res.durationMs / 1000);
    // One line per attempt. Successes at debug: at thousands a second, info would drown the failures.
    if (o.state === "delivered" && !log.isLevelEnabled("debug")) return;
    const line = {
      delivery: row.id,
      subscription: row.subscriptionId,
      attempt: `${o.attemptInRun}/${maxAttempts(policy)}`,
      status: res.statusCode,
      errorClass: o.errorClass,
      durationMs: res.durationMs,
      outcome,
      ...(res.ambiguous ? { ambiguous: true } : {}),
      ...(o.nextAttemptAt ? { nextAttemptAt: o.nextAttemptAt.toISOString() } : {}),
      ...(o.deadLetterReason ? { reason: o.deadLetterReason } : {}),
      ...(row.trigger !== "scheduled" ? { trigger: row.trigger } : {}),
    };
    if (o.state === "delivered") log.debug(line, "delivered");
    else if (o.state === "dead_letter") log.warn({ ...line, error: errorMessage }, "dead-lettered");
    else log.info({ ...line, error: errorMessage }, "attempt failed; retry scheduled");
  }
}

/** The credentials each endpoint URL carries, parsed once per URL rather than once per result. */
const urlSecretsByUrl = new Map<string, string[]>();

function redactAnswer(
  responseHeaders: Record<string, string> | null,
  responseExcerpt: string | null,
  values: string[],
): { responseHeaders: Record<string, string> | null; responseExcerpt: string | null } {
  if (values.length === 0) return { responseHeaders, responseExcerpt };
  return {
    responseHeaders: responseHeaders && Object.fromEntries(Object.entries(responseHeaders).map(([k, v]) => [k, redactSecrets(v, values) ?? v])),
    responseExcerpt: redactSecrets(responseExcerpt, values),
  };
}
