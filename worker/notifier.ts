// The notifier: beside the delivery loop, never in its way. Every tick it
// turns new operational events into notices (lib/notify/ingest.ts), then
// claims a bounded batch of due notices and sends each by e-mail or to the
// district's webhook, retrying with backoff and recording sent or failed with
// the reason. When no DLQ sample is recent (no dashboard running), it takes
// one first, so that dead letters waiting a day are still told of. Its own
// pool, its own timer; every error is caught and logged.
//
//   const notifier = startNotifier({ databaseUrl });   // in the worker
//   await notifier.stop();                             // on shutdown
import type pg from "pg";
import type { Logger } from "pino";
import { createPool } from "../lib/db/pool";
import { logger } from "../lib/log";
import { claimDueNotifications, recordSendOutcome, type DueNotification } from "../lib/ledger/sql/notifications";
import { ingestRound } from "../lib/notify/ingest";
import { NOTIFIER_DLQ_SAMPLE_MINUTES, sampleDlq } from "../lib/rollups/sampler";
import { createMailer, mailConfigFromEnv, postWebhook, type MailConfig, type Mailer } from "../lib/notify/channels";
import { digestSubject } from "../lib/notify/messages";
import { Sender } from "../lib/net/sender";
import { privateTargetsAllowed } from "../lib/net/ssrf";
import { startTimedLoop } from "./timed-loop";

/** Five attempts over about half an hour: a mail server restarting or a webhook's brief outage is ridden out. */
export const DEFAULT_RETRY_DELAYS_MS = [2 * 60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000];
const DEFAULT_INTERVAL_MS = 5_000;
const NOTICES_PER_TICK = 20;

export type NotifierOptions = {
  databaseUrl?: string;
  pool?: pg.Pool;
  log?: Logger;
  intervalMs?: number;
  /** The wait after each failed attempt; one attempt more than entries, then failed for good. */
  retryDelaysMs?: number[];
  /** Defaults to HOOKLEDGER_SMTP_URL and HOOKLEDGER_NOTIFY_FROM; null: no e-mail. */
  mail?: MailConfig | null;
  allowPrivateTargets?: boolean;
};

export type Notifier = { tick: () => Promise<void>; stop: () => Promise<void> };

export function startNotifier(opts: NotifierOptions = {}): Notifier {
  const owned = !opts.pool;
  const pool = opts.pool ?? createPool({ url: opts.databaseUrl, max: 2, statementTimeoutMs: 30_000 });
  const log = (opts.log ?? logger).child({ component: "notifier" });
  const delays = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const sender = new Sender({ allowPrivate: opts.allowPrivateTargets ?? privateTargetsAllowed(), connectionsPerOrigin: 2 });
  let mailer: Mailer | null = null;
  try {
    const cfg = opts.mail === undefined ? mailConfigFromEnv() : opts.mail;
    mailer = cfg ? createMailer(cfg) : null;
  } catch (err) {
    log.error({ err: (err as Error).message }, "e-mail notifications are off");
  }
  async function deliver(n: DueNotification): Promise<void> {
    const m = { subject: n.digestCount > 0 ? digestSubject(n.subject, n.digestCount) : n.subject, body: n.body };
    try {
      if (n.channel === "email") {
        if (!mailer) return await recordSendOutcome(pool, n.id, { ok: false, error: "no SMTP configured (HOOKLEDGER_SMTP_URL is not set)", retryInMs: null });
        await mailer.send(n.recipient, m);
      } else await postWebhook(sender, n.recipient, m);
      await recordSendOutcome(pool, n.id, { ok: true });
    } catch (err) {
      const error = (err as Error).message || String(err);
      const retryInMs = n.attempts <= delays.length ? delays[n.attempts - 1] : null;
      log.warn({ notification: n.id, channel: n.channel, attempts: n.attempts, err: error, final: retryInMs === null }, "notification not sent");
      await recordSendOutcome(pool, n.id, { ok: false, error, retryInMs }).catch((e) =>
        log.warn({ err: (e as Error).message, notification: n.id }, "could not record a notification's outcome; its lease runs out and it is tried again"),
      );
    }
  }

  async function tick(): Promise<void> {
    try {
      await sampleDlq(pool, { minGapMs: NOTIFIER_DLQ_SAMPLE_MINUTES * 60_000 });
    } catch (err) {
      log.warn({ err: (err as Error).message }, "could not sample the dead letters; trying again next tick");
    }
    try {
      const r = await ingestRound(pool);
      if (r && r.events + r.due + r.folded + r.unaddressed > 0) log.info(r, "notices made");
    } catch (err) {
      log.warn({ err: (err as Error).message }, "could not turn events into notices; trying again next tick");
    }
    try {
      // The lease outlasts a send's timeouts (SMTP 10 s + 20 s, the webhook 15 s) with room to record it.
      const due = await claimDueNotifications(pool, { limit: NOTICES_PER_TICK, leaseSeconds: 120 });
      await Promise.all(due.map(deliver));
    } catch (err) {
      log.warn({ err: (err as Error).message }, "could not claim due notifications; trying again next tick");
    }
  }

  const loop = startTimedLoop(tick, opts.intervalMs ?? DEFAULT_INTERVAL_MS, { unref: true });

  return {
    tick,
    async stop() {
      await loop.stop();
      mailer?.close();
      await sender.agent.close().catch(() => {});
      if (owned) await pool.end().catch(() => {});
    },
  };
}
