// Notifications to a district (migration 0042): the worker reads the
// operational events that concern a district after a stored cursor, turns
// each into one notice per contact (folding repeats within the hour into a
// digest), and sends the due ones (worker/notifier.ts). The messages are
// lib/notify/messages.ts; this file is the SQL.
import "server-only";
import type pg from "pg";
import { AppError } from "../../errors";
import { join, queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import type { Scope } from "../../tenants/scope";
import { BAD_NOTIFICATION_CURSOR } from "../../notify/input";

export type NotifyKind = "paused" | "disabled" | "recovered" | "dlq_threshold" | "dlq_old" | "secret_expiring";
type NotifyChannel = "email" | "webhook";
/** "unaddressed" (channel "none"): the district had no contacts, so nobody was told (migration 0048). */
type NotificationStatus = "pending" | "sent" | "failed" | "suppressed" | "unaddressed";

/** The operational events a district is told about, and the kind of notice each makes. */
export const EVENT_KINDS: Record<string, NotifyKind> = {
  "hookledger.subscription.paused": "paused",
  "hookledger.subscription.disabled": "disabled",
  "hookledger.subscription.recovered": "recovered",
  "hookledger.dlq.threshold_exceeded": "dlq_threshold",
};

/**
 * Events are read again this far behind the cursor: an event's created_at is its transaction's start, so one that
 * commits late can land behind events already read. A source read twice makes no second notice (notifications_source).
 */
const LOOKBACK = "2 minutes";
/** The once-an-hour rule's window. */
const DIGEST_WINDOW = "1 hour";
/**
 * The tenant has someone to tell. The scans of secrets and old dead letters make no row for a tenant without contacts,
 * so without this such a source would be read again every round (and could crowd out the others within a round's
 * limit). An operational event makes a row either way (recordUnaddressed), so that the district was not told is said.
 */
const HAS_CONTACTS = (tenant: string) =>
  `EXISTS (SELECT 1 FROM tenant_contacts tc WHERE tc.tenant = ${tenant} AND (cardinality(tc.emails) > 0 OR tc.webhook_url IS NOT NULL))`;

export type OpsEventRow = { id: string; type: string; tenant: string; createdAt: Date; data: Record<string, unknown> };

/**
 * The next operational events for notices, oldest first, that made none yet. A district hears "recovered" only from a
 * probe that resumed its paused subscription: the ops stream also says recovered when a delivery succeeds after a dead
 * letter, which for an endpoint that dead-letters one kind of event and takes the rest is every few seconds, and it
 * was never paused. Those are left out here, not skipped later, or they would be read again every round.
 */
export async function readNewOpsEvents(db: pg.PoolClient, limit: number): Promise<OpsEventRow[]> {
  const { rows } = await db.query<OpsEventRow>(
    `SELECT e.id, e.type, e.tenant, e.created_at AS "createdAt", convert_from(e.payload, 'UTF8')::jsonb -> 'data' AS data
       FROM events e, notify_cursor c
      WHERE e.type = ANY($1::text[]) AND e.created_at > c.at - interval '${LOOKBACK}' AND e.tenant IS NOT NULL AND e.tombstone IS NULL
        AND (e.type <> 'hookledger.subscription.recovered' OR convert_from(e.payload, 'UTF8')::jsonb -> 'data' -> 'probe' IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.source = e.id AND n.digest_count = 0)
        AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = e.tenant)
      ORDER BY e.created_at, e.id LIMIT $2`,
    [Object.keys(EVENT_KINDS), limit],
  );
  return rows;
}

export async function advanceCursor(db: pg.PoolClient, to: { at: Date; eventId: string }): Promise<void> {
  await db.query(`UPDATE notify_cursor SET at = $1, event_id = $2 WHERE at < $1`, [to.at, to.eventId]);
}

/** One worker at a time turns events into notices (a transaction-scoped lock: released at commit or rollback). */
export async function tryIngestLock(db: pg.PoolClient): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext('hookledger.notify.ingest')) AS ok`);
  return rows[0]?.ok === true;
}

/** What a notice about a subscription says, and to whom it goes. */
export type NoticeContext = {
  subscriptionId: string;
  subscriptionName: string;
  url: string;
  tenant: string;
  tenantName: string;
  state: string;
  stateReason: string | null;
  failingSince: Date | null;
  probeIntervalSeconds: number | null;
  emails: string[];
  webhookUrl: string | null;
  lastStatus: number | null;
  lastErrorClass: string | null;
  lastErrorMessage: string | null;
  lastExcerpt: string | null;
  lastAt: Date | null;
};

export async function noticeContext(db: pg.PoolClient, subscriptionId: string): Promise<NoticeContext | null> {
  const { rows } = await db.query<NoticeContext>(
    `SELECT s.id AS "subscriptionId", s.name AS "subscriptionName", s.url, s.tenant, t.name AS "tenantName", s.state, s.state_reason AS "stateReason",
            s.failing_since AS "failingSince", s.probe_interval_seconds AS "probeIntervalSeconds",
            COALESCE(c.emails, '{}') AS emails, c.webhook_url AS "webhookUrl",
            la.status_code AS "lastStatus", la.error_class AS "lastErrorClass", la.error_message AS "lastErrorMessage",
            la.response_excerpt AS "lastExcerpt", la.started_at AS "lastAt"
       FROM subscriptions s JOIN tenants t ON t.id = s.tenant
       LEFT JOIN tenant_contacts c ON c.tenant = s.tenant
       LEFT JOIN LATERAL (SELECT a.status_code, a.error_class, a.error_message, a.response_excerpt, a.started_at
                            FROM attempts a WHERE a.subscription_id = s.id ORDER BY a.started_at DESC LIMIT 1) la ON true
      WHERE s.id = $1`,
    [subscriptionId],
  );
  return rows[0] ?? null;
}

export type NewNotice = {
  tenant: string;
  subscriptionId: string;
  kind: NotifyKind;
  channel: NotifyChannel;
  recipient: string;
  subject: string;
  body: string;
  source: string;
};

/**
 * Records a notice. The first of its kind to this recipient about this subscription within the hour is due now;
 * a later one is kept as `suppressed` and counted on the hour's digest, which is due when the hour ends and says
 * "and N more". Returns what happened; "seen" when this source already made its notice.
 */
export async function recordNotice(db: pg.PoolClient, n: NewNotice): Promise<"due" | "folded" | "seen"> {
  const { rows: first } = await db.query<{ id: string; createdAt: Date }>(
    `SELECT id, created_at AS "createdAt" FROM notifications
      WHERE subscription_id = $1 AND kind = $2 AND channel = $3 AND recipient = $4 AND digest_of IS NULL AND status <> 'suppressed'
        AND created_at > now() - interval '${DIGEST_WINDOW}'
      ORDER BY created_at DESC LIMIT 1`,
    [n.subscriptionId, n.kind, n.channel, n.recipient],
  );
  const base = [n.tenant, n.subscriptionId, n.kind, n.channel, n.recipient, n.subject, n.body, n.source];
  if (!first[0]) {
    const r = await db.query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, next_attempt_at)
       VALUES (hl_new_id('ntf_'), $1, $2, $3, $4, $5, $6, $7, $8, 'pending', now())
       ON CONFLICT (source, channel, recipient) WHERE digest_count = 0 DO NOTHING`,
      base,
    );
    return r.rowCount ? "due" : "seen";
  }
  const r = await db.query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, digest_of, last_error)
     VALUES (hl_new_id('ntf_'), $1, $2, $3, $4, $5, $6, $7, $8, 'suppressed', $9, 'folded into the hourly digest (at most one notice of a kind an hour)')
     ON CONFLICT (source, channel, recipient) WHERE digest_count = 0 DO NOTHING`,
    [...base, first[0].id],
  );
  if (!r.rowCount) return "seen";
  const bumped = await db.query(
    `UPDATE notifications SET digest_count = digest_count + 1, subject = $2, body = $3 WHERE digest_of = $1 AND digest_count > 0 AND status = 'pending'`,
    [first[0].id, n.subject, n.body],
  );
  if (!bumped.rowCount)
    await db.query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, digest_of, digest_count, next_attempt_at)
       VALUES (hl_new_id('ntf_'), $1, $2, $3, $4, $5, $6, $7, 'digest:' || $8, 'pending', $8, 1, $9::timestamptz + interval '${DIGEST_WINDOW}')`,
      [...base.slice(0, 7), first[0].id, first[0].createdAt],
    );
  return "folded";
}

/**
 * What would have been said, when the district has no contacts: kept as `unaddressed` on channel "none", never sent,
 * so the Notifications page shows the district was not told rather than nothing. "seen" when this source already made it.
 */
export async function recordUnaddressed(db: pg.PoolClient, n: Omit<NewNotice, "channel" | "recipient">): Promise<"unaddressed" | "seen"> {
  const r = await db.query(
    `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status)
     VALUES (hl_new_id('ntf_'), $1, $2, $3, 'none', '', $4, $5, $6, 'unaddressed')
     ON CONFLICT (source, channel, recipient) WHERE digest_count = 0 DO NOTHING`,
    [n.tenant, n.subscriptionId, n.kind, n.subject, n.body, n.source],
  );
  return r.rowCount ? "unaddressed" : "seen";
}

/** Signing secrets whose overlap ends within `withinHours` and that made no notice yet. */
export async function endingSecretOverlaps(db: pg.PoolClient, withinHours: number): Promise<{ secretId: string; subscriptionId: string; expiresAt: Date }[]> {
  const { rows } = await db.query<{ secretId: string; subscriptionId: string; expiresAt: Date }>(
    `SELECT ss.id AS "secretId", ss.subscription_id AS "subscriptionId", ss.expires_at AS "expiresAt"
       FROM subscription_secrets ss JOIN subscriptions s ON s.id = ss.subscription_id
      WHERE ss.expires_at > now() AND ss.expires_at <= now() + make_interval(hours => $1) AND s.tenant IS NOT NULL AND s.archived_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.source = 'secret:' || ss.id AND n.digest_count = 0) AND ${HAS_CONTACTS("s.tenant")}
      ORDER BY ss.expires_at LIMIT 100`,
    [withinHours],
  );
  return rows;
}

/**
 * Subscriptions whose oldest dead letter has waited longer than `olderThanHours`, from the dead-letter sampler's
 * newest sample (lib/rollups/sampler.ts: per subscription, its depth and oldest dead letter), not from the deliveries:
 * a scan of an old queue every round would cost what the queue holds. Each oldest dead letter makes one notice. A
 * sample older than `sampleMaxAgeMinutes` is not read: dead letters redriven or resolved since would be told of as
 * waiting (the worker's notifier samples when nothing else has: worker/notifier.ts).
 */
export async function oldDeadLetters(
  db: pg.PoolClient,
  olderThanHours: number,
  sampleMaxAgeMinutes: number,
): Promise<{ subscriptionId: string; oldestAt: Date; depth: number; source: string }[]> {
  const { rows } = await db.query<{ subscriptionId: string; oldestAt: Date; depth: number; source: string }>(
    `SELECT x.* FROM (
       SELECT g.subscription_id AS "subscriptionId", min(g.oldest_at) AS "oldestAt", sum(g.depth)::int AS depth,
              'dlq-old:' || g.subscription_id || ':' || extract(epoch FROM min(g.oldest_at))::bigint AS source
         FROM dlq_sample_groups g
        WHERE g.sampled_at = (SELECT max(sampled_at) FROM dlq_samples)
          AND g.sampled_at > now() - make_interval(mins => $2)
        GROUP BY g.subscription_id
       HAVING min(g.oldest_at) < now() - make_interval(hours => $1)) x
      WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.source = x.source AND n.digest_count = 0)
        AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = x."subscriptionId" AND ${HAS_CONTACTS("s.tenant")})
      LIMIT 100`,
    [olderThanHours, sampleMaxAgeMinutes],
  );
  return rows;
}

export type DueNotification = {
  id: string;
  tenant: string;
  channel: NotifyChannel;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
  digestCount: number;
};

/**
 * Claims due notices: moving next_attempt_at forward by `leaseSeconds` is the claim (SKIP LOCKED against a
 * concurrent one); a worker that dies mid-send leaves the notice due again when the lease runs out.
 */
export async function claimDueNotifications(db: pg.Pool | pg.PoolClient, opts: { limit: number; leaseSeconds: number }): Promise<DueNotification[]> {
  const { rows } = await db.query<DueNotification>(
    `UPDATE notifications n SET next_attempt_at = now() + make_interval(secs => $2), attempts = n.attempts + 1
       FROM (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= now()
              ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
      WHERE n.id = due.id
     RETURNING n.id, n.tenant, n.channel, n.recipient, n.subject, n.body, n.attempts, n.digest_count AS "digestCount"`,
    [opts.limit, opts.leaseSeconds],
  );
  return rows;
}

/** Sent; or failed with the reason, due again after `retryInMs` or for good when that is null. */
export async function recordSendOutcome(
  db: pg.Pool | pg.PoolClient,
  id: string,
  o: { ok: true } | { ok: false; error: string; retryInMs: number | null },
): Promise<void> {
  if (o.ok) {
    await db.query(`UPDATE notifications SET status = 'sent', sent_at = now(), next_attempt_at = NULL, last_error = NULL WHERE id = $1`, [id]);
    return;
  }
  if (o.retryInMs === null)
    await db.query(`UPDATE notifications SET status = 'failed', next_attempt_at = NULL, last_error = $2 WHERE id = $1`, [id, o.error.slice(0, 1000)]);
  else
    await db.query(`UPDATE notifications SET next_attempt_at = now() + make_interval(secs => $3::double precision / 1000), last_error = $2 WHERE id = $1`, [
      id,
      o.error.slice(0, 1000),
      o.retryInMs,
    ]);
}

export type NotificationView = {
  id: string;
  tenant: string;
  subscriptionId: string | null;
  kind: NotifyKind;
  /** "none": nobody was told (status "unaddressed", recipient ""). */
  channel: NotifyChannel | "none";
  recipient: string;
  subject: string;
  status: NotificationStatus;
  attempts: number;
  lastError: string | null;
  digestCount: number;
  createdAt: string;
  sentAt: string | null;
  nextAttemptAt: string | null;
};

/**
 * A notice belongs to its tenant, and to its subscription when it has one: a one-subscription scope (a portal link for
 * one endpoint) sees that subscription's notices and not the tenant-wide ones (dead letters over the threshold), which
 * name the tenant's other subscriptions.
 */
function noticesInScope(scope: Scope) {
  if (scope.tenantId === null) return sql`true`;
  return scope.subscriptionId ? sql`tenant = ${scope.tenantId} AND subscription_id = ${scope.subscriptionId}` : sql`tenant = ${scope.tenantId}`;
}

/** One page of a scope's notices and the cursor of the next: the page's last notice's id, null on the last page. */
type NotificationPage = { items: NotificationView[]; nextCursor: string | null };

/**
 * A scope's notices, newest first (GET /api/v1/notifications and the Notifications page): ordered by (created_at, id)
 * descending, `limit` at a time. The notifier writes a round's notices in one transaction, so many share one
 * created_at and only the id tells them apart: the cursor is a notice's id (a page's nextCursor) and the page after it
 * holds the notices strictly after that one in this order, however many share its instant. A time alone (`before`,
 * still read for the callers of the first version) cannot say where within such an instant a page ended. A cursor
 * that is no notice of this scope (and tenant) is a 400 naming query.cursor (another tenant's notice is not a place to start from).
 * One more row than the page is read, so the last page says so (nextCursor null) instead of leading to an empty one.
 */
export async function listNotificationPage(
  db: LedgerDb,
  scope: Scope,
  opts: { limit: number; cursor?: string | null; before?: Date | null; tenant?: string | null },
): Promise<NotificationPage> {
  // `tenant`: one tenant's notices, within the scope (a scoped caller naming another tenant reads nothing).
  const where: Sql[] = [noticesInScope(scope), ...(opts.tenant ? [sql`tenant = ${opts.tenant}`] : [])];
  if (opts.cursor) {
    // Its created_at as text: microseconds, which a Date would round to the millisecond.
    const [at] = await queryRows<{ created_at: string }>(db, sql`SELECT created_at::text FROM notifications WHERE id = ${opts.cursor} AND ${join(where, " AND ")}`);
    if (!at) throw new AppError("validation_failed", `query.cursor: ${BAD_NOTIFICATION_CURSOR}.`, [{ path: "query.cursor", message: BAD_NOTIFICATION_CURSOR }]);
    where.push(sql`(created_at, id) < (${at.created_at}::timestamptz, ${opts.cursor}::text)`);
  }
  if (opts.before) where.push(sql`created_at < ${opts.before}`);
  const rows = await queryRows<Omit<NotificationView, "createdAt" | "sentAt" | "nextAttemptAt"> & { createdAt: Date; sentAt: Date | null; nextAttemptAt: Date | null }>(
    db,
    // A webhook's path is its secret (an incoming webhook posts to whoever knows it): its origin only.
    sql`SELECT id, tenant, subscription_id AS "subscriptionId", kind, channel,
               CASE WHEN channel = 'webhook' THEN substring(recipient FROM '^[a-z]+://[^/?#]+') || '/…' ELSE recipient END AS recipient, subject, status, attempts, last_error AS "lastError",
               digest_count AS "digestCount", created_at AS "createdAt", sent_at AS "sentAt", next_attempt_at AS "nextAttemptAt"
          FROM notifications
         WHERE ${join(where, " AND ")}
         ORDER BY created_at DESC, id DESC LIMIT ${opts.limit + 1}`,
  );
  const page = rows.slice(0, opts.limit);
  return {
    items: page.map((r) => ({
      ...r,
      createdAt: r.createdAt.toISOString(),
      sentAt: r.sentAt ? r.sentAt.toISOString() : null,
      nextAttemptAt: r.nextAttemptAt ? r.nextAttemptAt.toISOString() : null,
    })),
    nextCursor: rows.length > opts.limit ? page[page.length - 1].id : null,
  };
}

/** A scope's newest notices (the audit page's few): the first page of listNotificationPage. */
export async function listNotifications(db: LedgerDb, scope: Scope, opts: { limit: number }): Promise<NotificationView[]> {
  return (await listNotificationPage(db, scope, opts)).items;
}
