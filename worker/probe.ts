// The prober: while a subscription is paused for failing, ask its endpoint
// whether it is back with a signed hookledger.ping on the policy's schedule
// (lib/ledger/sql/probe.ts), never with one of the held deliveries: a held
// delivery is neither sent early nor charged an attempt to find out. The first 2xx resumes the subscription and its held
// deliveries drain through the ordinary claim.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Logger } from "pino";
import { claimDueProbes, recordProbe, type DueProbe } from "../lib/ledger/sql/probe";
import { readRetryPolicy } from "../lib/ledger/retry-policy";
import { openEndpointAuth } from "../lib/subscriptions/endpoint-auth";
import type { SecretsCache } from "./secrets";
import { pingBody, type Sender } from "../lib/net/sender";

/** Probes a worker sends at once at most: a handful of endpoints are down at a time, and each probe is one request. */
const PROBES_PER_TICK = 10;

export class Prober {
  constructor(
    private readonly w: {
      pool: pg.Pool;
      log: Logger;
      sender: Sender;
      secrets: SecretsCache;
      /** Aborted at shutdown. */
      holding: AbortSignal;
      /** Resumed subscriptions' held deliveries are due now: wake the claim loop. */
      onResumed: () => void;
    },
  ) {}

  /** One round: claim the due probes, send them side by side, record each answer. */
  async tick(): Promise<void> {
    let due: DueProbe[];
    try {
      // The lease outlasts the longest probe (the policy's timeout, at most 120 s) with room to record it.
      due = await claimDueProbes(this.w.pool, { limit: PROBES_PER_TICK, leaseSeconds: 180 });
    } catch (err) {
      this.w.log.warn({ err: (err as Error).message }, "could not claim due probes");
      return;
    }
    await Promise.all(due.map((p) => this.probe(p)));
  }

  private async probe(p: DueProbe) {
    const { log, holding } = this.w;
    try {
      const secrets = await this.w.secrets.get(p.id, holding);
      if (holding.aborted) return; // shutting down: the claim's lease runs out and another worker probes
      if (secrets.length === 0) {
        log.error({ subscription: p.id }, "no signing secret could be loaded; not probing");
        return;
      }
      const auth = openEndpointAuth(p.id, { headers: p.endpointHeaders, tls: p.endpointTls });
      // A fresh id per probe: a probe is not a delivery, and a receiver must not mistake one for a repeat of another.
      const id = `probe_${randomBytes(12).toString("hex")}`;
      const at = new Date();
      const res = await this.w.sender.send({
        url: p.url,
        deliveryKey: id,
        body: pingBody(id, p.id, "probe", at),
        secrets,
        timeoutMs: readRetryPolicy(p.retryPolicy).timeoutMs,
        headers: auth.headers,
        tls: auth.tls,
      });
      if (res.errorClass === "shutdown") return;
      const ok = res.statusCode !== null && res.statusCode >= 200 && res.statusCode < 300;
      const error = ok ? null : res.statusCode !== null ? `HTTP ${res.statusCode}` : `${res.errorClass}: ${res.errorMessage ?? "no answer"}`;
      const outcome = await recordProbe(this.w.pool, { subscriptionId: p.id, status: res.statusCode, error, latencyMs: res.durationMs, at });
      const line = { subscription: p.id, probe: id, status: res.statusCode, durationMs: res.durationMs, probeCount: p.probeCount + 1 };
      if (outcome === "resumed") {
        log.warn(line, "probe answered 2xx; subscription resumed, held deliveries drain");
        this.w.onResumed();
      } else if (outcome === "failing") log.info({ ...line, error }, "probe failed; subscription stays paused for failing");
    } catch (err) {
      // The claim's lease (next_probe_at moved forward) runs out and the probe is due again.
      log.warn({ err: (err as Error).message, subscription: p.id }, "probe failed to run");
    }
  }
}
