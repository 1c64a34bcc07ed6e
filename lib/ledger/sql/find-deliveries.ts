// Finding deliveries: the filtered, cursor-paged list (the public
// GET /api/v1/deliveries and a subscription's timeline on the dashboard), the
// lookup box's search, and the attempts of a page of deliveries. Every
// branch is an index lookup; the index each relies on is named beside it.
import "server-only";
import { empty, join, queryRows, sql, type LedgerDb, type Sql } from "../read/db";
import { DELIVERY_COLUMNS, attemptColumns, toAttemptRecord, toDeliveryRecord, type AttemptRow, type DeliveryRow } from "../read/map";
import type { AttemptRecord, DeliveryRecord, DeliveryWithAttempts } from "../read/types";
import { GLOBAL_SCOPE, eventTenantWhere, scopeWhere, subjectValuesInScope, subscriptionInScope, type Scope } from "../../tenants/scope";

/**
 * Events one `q` reads at most per page: a student's events for years. A value common to many events (a school, an
 * assignment) is cut off here inside the statement rather than brought back whole; the pages after the first look
 * below their cursor (cursorTime), so paging still reaches every match.
 */
const Q_EVENTS = 1000;

/**
 * The time in a delivery id (hl_new_id: 14 hex digits of microseconds since 1970 after the prefix), rounded up to the
 * millisecond a Date holds. A delivery is written with or after its event, so every delivery older than a cursor
 * belongs to an event created no later than it; rounded down, an event of the cursor's own millisecond could fall
 * below the bound and its deliveries off every page.
 */
function cursorTime(cursor: string): Date | null {
  const m = /^dlv_([0-9a-f]{14})/.exec(cursor);
  return m ? new Date(Number((BigInt(`0x${m[1]}`) + 999n) / 1000n)) : null;
}

export type DeliveryFilter = {
  subscriptionId?: string;
  state?: string;
  eventId?: string;
  eventType?: string;
  lastStatusCode?: number;
  lastErrorClass?: string;
  /** An event id, a subject value (student id…), a delivery key or a delivery id. */
  q?: string;
  /** Ids are time-ordered (hl_new_id): a time range is an id range. */
  idAtLeast?: string;
  idBelow?: string;
  /** The last id of the previous page, newest first. */
  cursor?: string;
  limit: number;
  /** The caller's tenant boundary (lib/tenants/scope.ts); absent = global. */
  scope?: Scope;
};

export type DeliveryPage<T = DeliveryRecord> = { items: T[]; nextCursor: string | null };

/**
 * Deliveries matching every given filter, newest first, `limit` at a time.
 * With a subscription it walks deliveries_sub_timeline (subscription_id,
 * id DESC). `q` is resolved inside the same statement: the matching events
 * (events pk; the events_subject_values GIN, the newest Q_EVENTS below the
 * cursor), in the caller's tenant, then deliveries by key, id or event_id, each
 * branch on its own index.
 */
export async function findDeliveries(db: LedgerDb, f: DeliveryFilter): Promise<DeliveryPage> {
  const scope = f.scope ?? GLOBAL_SCOPE;
  const where: Sql[] = [scopeWhere(scope)];
  if (f.subscriptionId) where.push(sql`d.subscription_id = ${f.subscriptionId}`);
  if (f.state) where.push(sql`d.state = ${f.state}`);
  if (f.eventId) where.push(sql`d.event_id = ${f.eventId}`);
  if (f.eventType) where.push(sql`d.event_type = ${f.eventType}`);
  if (f.lastStatusCode !== undefined) where.push(sql`d.last_status_code = ${f.lastStatusCode}::int`);
  if (f.lastErrorClass) where.push(sql`d.last_error_class = ${f.lastErrorClass}`);
  if (f.idAtLeast) where.push(sql`d.id >= ${f.idAtLeast}`);
  if (f.idBelow) where.push(sql`d.id < ${f.idBelow}`);
  if (f.cursor) where.push(sql`d.id < ${f.cursor}`);
  let matched: Sql = empty;
  if (f.q) {
    // The events `q` names stay in the database: a value common to thousands of events (every tenant's) was
    // once read back whole and sent again as an array before the tenant was applied. Here the tenant confines
    // the events themselves, and the subject-value branch is cut at Q_EVENTS.
    const below = f.cursor ? cursorTime(f.cursor) : null;
    const ev = sql`(SELECT id FROM events WHERE id = ${f.q} AND ${eventTenantWhere(scope)})
      UNION (SELECT id FROM events WHERE subject_values @> ${subjectValuesInScope(scope, f.q)}::text[] AND ${eventTenantWhere(scope)}
             ${below ? sql`AND created_at <= ${below}` : empty} ORDER BY created_at DESC LIMIT ${Q_EVENTS}::int)`;
    // The few deliveries `q` names, read first by their own indexes (an array from the events, probed
    // through deliveries_event) and the rest of the query run over them alone (a materialized CTE): left
    // to itself, the planner may instead read a district's subscriptions' whole timelines
    // (deliveries_sub_timeline, a million entries at 10 M deliveries) to meet a student's few hundred deliveries.
    matched = sql`WITH matched AS MATERIALIZED (
        SELECT d.* FROM deliveries d
         WHERE d.delivery_key = ${f.q} OR d.id = ${f.q} OR d.event_id = ANY(ARRAY(${ev}))) `;
  }
  const rows = await queryRows<DeliveryRow>(
    db,
    sql`${matched}SELECT ${DELIVERY_COLUMNS}
          FROM ${f.q ? sql`matched` : sql`deliveries`} d JOIN subscriptions s ON s.id = d.subscription_id
         WHERE ${where.length ? join(where, " AND ") : sql`true`}
         ORDER BY d.id DESC LIMIT ${f.limit + 1}::int`,
  );
  const page = rows.slice(0, f.limit).map(toDeliveryRecord);
  return { items: page, nextCursor: rows.length > f.limit ? page[page.length - 1].id : null };
}

/** How many events per lookup page a subject or tenant search reads: see searchDeliveries. */
const EVENT_WINDOW = 4;

/**
 * The lookup box: deliveries of an event id, a subject value (via the
 * events_subject_values GIN index), a tenant's events, a delivery key or id,
 * or a subscription's newest; newest first. `truncated` when more matched.
 *
 * `q` names a tenant by its id or (resolved by the caller into `tenants`) by its
 * name. A subject's or a tenant's events are read newest first, EVENT_WINDOW times
 * the page of them: many have no delivery (a district's endpoint that takes
 * grades only has none for its attendance events), so a page's worth of events
 * can be far less than a page of deliveries. When a window was full, older
 * events may have deliveries this page does not show, and it says truncated.
 */
export async function searchDeliveries(
  db: LedgerDb,
  q: string,
  limit: number,
  scope: Scope = GLOBAL_SCOPE,
  /** The tenants whose events `q` names: itself as an id, and any district whose name it is (the lookup resolves those). */
  tenants: readonly string[] = [q],
): Promise<{ items: DeliveryRecord[]; truncated: boolean }> {
  const window = (limit + 1) * EVENT_WINDOW;
  // Each branch is an index lookup: events pk, the subject GIN, events by
  // tenant, delivery key/id, and a subscription's newest deliveries.
  // The event branches are confined to the caller's tenant too: otherwise another tenant's events could fill their
  // limits and leave the caller's own matches out.
  const rows = await queryRows<DeliveryRow & { more_events: boolean }>(
    db,
    sql`WITH by_subject AS (
          SELECT id FROM events WHERE subject_values @> ${subjectValuesInScope(scope, q)}::text[] AND ${eventTenantWhere(scope)}
           ORDER BY created_at DESC LIMIT ${window}::int
        ), by_tenant AS (
          -- Each tenant's newest events on its own (an index scan each), not one scan sorted across them.
          SELECT e.id FROM unnest(${[...tenants]}::text[]) AS t(id)
           CROSS JOIN LATERAL (SELECT id FROM events WHERE tenant = t.id AND ${eventTenantWhere(scope)} ORDER BY created_at DESC LIMIT ${window}::int) e
        ), ev AS (
          (SELECT id FROM events WHERE id = ${q} AND ${eventTenantWhere(scope)})
          UNION (SELECT id FROM by_subject)
          UNION (SELECT id FROM by_tenant)
        ), ids AS (
          (SELECT d.id FROM deliveries d WHERE d.event_id IN (SELECT id FROM ev))
          UNION (SELECT d.id FROM deliveries d WHERE d.delivery_key = ${q} OR d.id = ${q})
          UNION (SELECT d.id FROM deliveries d WHERE d.subscription_id = ${q} AND ${subscriptionInScope(scope, "d.subscription_id")} ORDER BY d.id DESC LIMIT ${limit + 1}::int)
        ), found AS (
          SELECT ${DELIVERY_COLUMNS}
            FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
           WHERE d.id IN (SELECT id FROM ids) AND ${scopeWhere(scope)}
           ORDER BY d.id DESC LIMIT ${limit + 1}::int
        )
        -- One row even when nothing was found: a full window of events without a delivery is still "more may match".
        SELECT found.*, w.more_events
          FROM (SELECT (SELECT count(*) FROM by_subject) >= ${window}::int OR (SELECT count(*) FROM by_tenant) >= ${window}::int AS more_events) w
          LEFT JOIN found ON true
         ORDER BY found.id DESC`,
  );
  const found = rows.filter((r) => r.id !== null);
  return { items: found.slice(0, limit).map(toDeliveryRecord), truncated: found.length > limit || rows[0].more_events };
}

/**
 * The attempts of several deliveries, oldest first, grouped by delivery id
 * (attempts_delivery). Lists pass `excerptChars` to carry only the start of
 * each answer. No attempt is older than its delivery, so the oldest
 * delivery's created_at bounds the months read: attempts is partitioned by
 * month (migration 0021), and a page of recent deliveries reads the recent
 * months' indexes only, not every month's.
 */
export async function findAttempts(db: LedgerDb, deliveryIds: string[], opts: { excerptChars?: number } = {}): Promise<Map<string, AttemptRecord[]>> {
  const out = new Map<string, AttemptRecord[]>();
  if (deliveryIds.length === 0) return out;
  const rows = await queryRows<AttemptRow>(
    db,
    sql`SELECT ${attemptColumns(opts.excerptChars)}
          FROM attempts WHERE delivery_id = ANY(${deliveryIds}::text[])
           AND created_at >= (SELECT min(created_at) FROM deliveries WHERE id = ANY(${deliveryIds}::text[]))
         ORDER BY delivery_id, attempt_number, id`,
  );
  for (const r of rows) {
    const list = out.get(r.delivery_id) ?? [];
    list.push(toAttemptRecord(r));
    out.set(r.delivery_id, list);
  }
  return out;
}

/** Each delivery of a page with its attempts (excerpts cut to `excerptChars`). */
export async function withAttempts(db: LedgerDb, items: DeliveryRecord[], opts: { excerptChars?: number } = {}): Promise<DeliveryWithAttempts[]> {
  const attempts = await findAttempts(
    db,
    items.map((d) => d.id),
    opts,
  );
  return items.map((d) => ({ ...d, attempts: attempts.get(d.id) ?? [] }));
}

/** Event types among a subscription's newest `window` deliveries (deliveries_sub_timeline), for a filter's options. */
export async function findRecentEventTypes(db: LedgerDb, subscriptionId: string, window = 2000): Promise<string[]> {
  const rows = await queryRows<{ event_type: string }>(
    db,
    sql`SELECT DISTINCT event_type
          FROM (SELECT event_type FROM deliveries WHERE subscription_id = ${subscriptionId} ORDER BY id DESC LIMIT ${window}::int) x
         ORDER BY 1`,
  );
  return rows.map((r) => r.event_type);
}

/**
 * Whether a subscription holds another tenant's history if it changed tenant: any delivery (its event, payload,
 * attempts and answers are read through the subscription's tenant), or a test send of a stored event (the event's
 * id and the endpoint's answer to its bytes). deliveries_sub_timeline and test_sends_subscription_created, one probe each.
 */
export async function subscriptionHasHistory(db: LedgerDb, subscriptionId: string): Promise<boolean> {
  const [r] = await queryRows<{ found: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM deliveries WHERE subscription_id = ${subscriptionId})
            OR EXISTS (SELECT 1 FROM test_sends WHERE subscription_id = ${subscriptionId} AND event_id IS NOT NULL) AS found`,
  );
  return r.found;
}
