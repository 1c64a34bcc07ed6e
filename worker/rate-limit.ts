// Per-subscription rate limit (subscriptions.rate_limit_per_second): a token
// bucket per subscription in this process. With N worker processes a district
// can see up to N times its limit; the claim query also caps each claim at
// one second's worth of rows per subscription.
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number; rate: number }>();

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

  /** Subscriptions with no token left (reserved by claimed rows): skipped by the next claim. */
  exhausted(): string[] {
    const out: string[] = [];
    for (const [id, b] of this.buckets) if (this.bucket(id, b.rate).tokens < 1) out.push(id);
    return out;
  }
}
