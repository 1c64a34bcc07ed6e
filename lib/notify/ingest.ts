// From what happened to notices (worker/notifier.ts runs it): the operational
// events of a subscription paused for failing, disabled by a 410, recovered
// after a probe or past its dead-letter threshold, read after a stored cursor,
// and signing secrets whose overlap ends within a day, each turned into one
// notice per contact of the subscription's tenant. One worker at a time (an
// advisory lock), in one transaction: the notices and the cursor move together.
import "server-only";
import type pg from "pg";
import { withTransaction } from "../db/client";
import { publicUrl } from "../auth/host";
import {
  advanceCursor,
  endingSecretOverlaps,
  EVENT_KINDS,
  noticeContext,
  oldDeadLetters,
  readNewOpsEvents,
  recordNotice,
  recordUnaddressed,
  tryIngestLock,
  type NoticeContext,
  type NotifyKind,
} from "../ledger/sql/notifications";
import { composeNotice } from "./messages";

/** Events turned into notices per round at most; the rest wait for the next round. */
const EVENTS_PER_ROUND = 200;
/** A secret's overlap ending this soon makes a notice. */
const SECRET_WARNING_HOURS = 24;
/** A dead letter waiting this long makes a notice: nobody redrove or resolved it within a working day. */
const DEAD_LETTER_AGE_HOURS = 24;
/**
 * The newest DLQ sample is read for that only while it is this recent. The dashboard samples every
 * HOOKLEDGER_SAMPLE_INTERVAL_MS; without a dashboard, the worker's notifier every NOTIFIER_DLQ_SAMPLE_MINUTES (lib/rollups/sampler.ts).
 */
const DLQ_SAMPLE_MAX_AGE_MINUTES = 15;

/** `unaddressed`: notices recorded as not sent, the district having no contacts. */
export type IngestResult = { events: number; due: number; folded: number; unaddressed: number };

/** The subscription's page on the dashboard: HOOKLEDGER_PUBLIC_URL's origin when set, else localhost on the dashboard's port (`hookledger start` gives its workers PORT). */
function subscriptionLink(subscriptionId: string): string {
  const base = publicUrl()?.origin ?? `http://localhost:${process.env.PORT || 3000}`;
  return `${base}/subscriptions/${encodeURIComponent(subscriptionId)}`;
}

async function noticesFor(db: pg.PoolClient, kind: NotifyKind, c: NoticeContext, data: Record<string, unknown>, source: string, out: IngestResult): Promise<void> {
  const m = composeNotice(kind, c, data, subscriptionLink(c.subscriptionId));
  const to: { channel: "email" | "webhook"; recipient: string }[] = c.emails.map((e) => ({ channel: "email", recipient: e }));
  if (c.webhookUrl) to.push({ channel: "webhook", recipient: c.webhookUrl });
  if (to.length === 0) {
    if ((await recordUnaddressed(db, { tenant: c.tenant, subscriptionId: c.subscriptionId, kind, ...m, source })) === "unaddressed") out.unaddressed++;
    return;
  }
  for (const r of to) {
    const done = await recordNotice(db, { tenant: c.tenant, subscriptionId: c.subscriptionId, kind, ...r, ...m, source });
    if (done === "due") out.due++;
    else if (done === "folded") out.folded++;
  }
}

/** One round; null when another worker holds the lock. */
export async function ingestRound(pool: pg.Pool): Promise<IngestResult | null> {
  return withTransaction(pool, async (db) => {
    if (!(await tryIngestLock(db))) return null;
    const out: IngestResult = { events: 0, due: 0, folded: 0, unaddressed: 0 };
    const events = await readNewOpsEvents(db, EVENTS_PER_ROUND);
    for (const e of events) {
      const subscriptionId = typeof e.data?.subscriptionId === "string" ? e.data.subscriptionId : null;
      const c = subscriptionId ? await noticeContext(db, subscriptionId) : null;
      if (c) await noticesFor(db, EVENT_KINDS[e.type], c, e.data, e.id, out);
      out.events++;
    }
    const last = events.at(-1);
    if (last) await advanceCursor(db, { at: last.createdAt, eventId: last.id });
    for (const s of await endingSecretOverlaps(db, SECRET_WARNING_HOURS)) {
      const c = await noticeContext(db, s.subscriptionId);
      if (c) await noticesFor(db, "secret_expiring", c, { expiresAt: s.expiresAt.toISOString() }, `secret:${s.secretId}`, out);
    }
    for (const d of await oldDeadLetters(db, DEAD_LETTER_AGE_HOURS, DLQ_SAMPLE_MAX_AGE_MINUTES)) {
      const c = await noticeContext(db, d.subscriptionId);
      if (c) await noticesFor(db, "dlq_old", c, { depth: d.depth, oldestAt: d.oldestAt.toISOString() }, d.source, out);
    }
    return out;
  });
}
