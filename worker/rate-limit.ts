// Per-subscription rate limit (subscriptions.rate_limit_per_second): a token
// bucket per subscription in this process. With N worker processes a district
// can see up to N times its limit; the claim query also caps each claim at
// one second's worth of rows per subscription.
//
// And the endpoint's own word: a 429 or 503 with Retry-After says "nothing
// until then", of the endpoint, not of the one delivery (GitLab's webhooks
// back off the same way). Until then this process claims nothing for the
// subscription and sends none of what it already claimed (released unsent,
// no attempt made), so its other deliveries do not spend attempts on answers
// that could only be 429 again. The other workers learn it from the ledger:
// the result write holds the subscription (subscriptions.held_until) and
// their claims leave it out. This process's own hold covers the rows it
// claimed before that write committed. At most MAX_ENDPOINT_HOLD_SECONDS.
import { MAX_ENDPOINT_HOLD_SECONDS } from "../lib/ledger/sql/write-results";

export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number; rate: number }>();
  /** Per subscription, until when (performance.now() ms) its endpoint asked to be left alone. */
  private backoffs = new Map<string, number>();

  /** The endpoint asked for `seconds` without requests (the Retry-After of a 429 or 503). */
  backOff(id: string, seconds: number) {
    const until = performance.now() + Math.min(seconds, MAX_ENDPOINT_HOLD_SECONDS) * 1000;
    if ((this.backoffs.get(id) ?? 0) < until) this.backoffs.set(id, until);
  }

  /** Whether the endpoint's Retry-After has not yet passed. */
  backingOff(id: string): boolean {
    const until = this.backoffs.get(id);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.backoffs.delete(id);
    return false;
  }

  private bucket(id: string, rate: number) {
    let b = this.buckets.get(id);
    const now = performance.now();
    if (!b) {
      b = { tokens: rate, at: now, rate };
      this.buckets.set(id, b);
    }
    b.rate = rate;
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    return b;
  }

  /** Waits for a token; false if `signal` aborted first. */
  async take(id: string, rate: number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      const b = this.bucket(id, rate);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return true;
      }
      const waitMs = Math.ceil(((1 - b.tokens) / rate) * 1000);
      const ok = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(true), waitMs);
        signal.addEventListener("abort", () => (clearTimeout(t), resolve(false)), { once: true });
      });
      if (!ok) return false;
    }
  }

  /** Subscriptions with no token left (reserved by claimed rows), or backing off: skipped by the next claim. */
  exhausted(): string[] {
    const out: string[] = [];
    for (const [id, b] of this.buckets) if (this.bucket(id, b.rate).tokens < 1) out.push(id);
    if (this.backoffs.size > 0) for (const id of [...this.backoffs.keys()]) if (this.backingOff(id) && !out.includes(id)) out.push(id);
    return out;
  }
}
