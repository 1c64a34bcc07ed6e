// Lookup (the support home page): one box for an event id, a delivery key or
// id, any subject value (student id, assignment id…), a tenant (its id or its
// name), or a
// subscription id or name. Deliveries come from the ledger's finder
// (lib/ledger/sql/find-deliveries.ts), subscriptions from their own table, and
// each delivery carries its event's subject, so a card can say what it is about.
import "server-only";
import { z } from "zod";
import { searchDeliveries, withAttempts } from "../ledger/sql/find-deliveries";
import { findEventSubjects, findSummaryData, findUnroutedEvents, type UnroutedEvent } from "../ledger/sql/lookup-events";
import { summaryValues } from "../catalog/summary-values";
import { ledgerDb, queryRows, sql, type LedgerDb } from "../ledger/read/db";
import type { DeliveryLite } from "./describe";
import { GLOBAL_SCOPE, scopeWhere, type Scope } from "../tenants/scope";
import { displayUrl } from "../display-url";

export const ZLookup = z.object({
  q: z.string().trim().min(1).max(200),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export type TLookup = z.input<typeof ZLookup>;

type SubscriptionMatch = { id: string; name: string; tenant: string | null; state: string; url: string };
export type LookupResult = {
  q: string;
  deliveries: DeliveryLite[];
  subscriptions: SubscriptionMatch[];
  truncated: boolean;
  /** More subscriptions match than `subscriptions` holds (the Subscriptions page's search lists them all). */
  subscriptionsTruncated: boolean;
  /** Events the search names that no subscription took (by subject value only when no delivery matched): received, but nobody was subscribed. */
  unrouted: UnroutedEvent[];
};

/** Lists show the first 200 characters of each answer. */
export const LIST_EXCERPT_CHARS = 200;

/** Subscriptions named at most: a word such as "LMS" can match thousands, which the Subscriptions page pages through. */
const SUBSCRIPTION_MATCHES = 20;

/** Districts one name may name (names are not unique): their events are read one district at a time. */
const DISTRICTS_BY_NAME = 5;

/** Unrouted events shown at most: they answer "was it received?", a few say it. */
const UNROUTED_LIMIT = 5;

/** `scope`: a scoped caller finds its tenant's subscriptions and deliveries only. */
export async function findLookupResults(opts: TLookup, db: LedgerDb = ledgerDb(), scope: Scope = GLOBAL_SCOPE): Promise<LookupResult> {
  const { q, limit } = ZLookup.parse(opts);
  const like = q.replace(/[\\%_]/g, (c) => `\\${c}`);
  // A district by its name as well as its id ("Lincoln Unified" for lincoln): support staff type what the parent wrote.
  const named = await queryRows<{ id: string }>(
    db,
    sql`SELECT id FROM tenants WHERE lower(name) = lower(${q}) AND id <> ${q} AND ${scope.tenantId === null ? sql`true` : sql`id = ${scope.tenantId}`}
         ORDER BY id LIMIT ${DISTRICTS_BY_NAME}::int`,
  );
  const tenants = [q, ...named.map((t) => t.id)];
  const subs = await queryRows<SubscriptionMatch>(
    db,
    sql`SELECT id, name, tenant, state, url FROM subscriptions
         WHERE (id = ${q} OR tenant = ANY(${tenants}::text[]) OR name ILIKE '%' || ${like} || '%') AND ${scopeWhere(scope, "tenant")}
         ORDER BY (id = ${q}) DESC, name LIMIT ${SUBSCRIPTION_MATCHES + 1}`,
  );
  const found = await searchDeliveries(db, q, limit, scope, tenants);
  const [withTries, subjects, summaries, unrouted] = await Promise.all([
    withAttempts(db, found.items, { excerptChars: LIST_EXCERPT_CHARS }),
    findEventSubjects(
      db,
      found.items.map((d) => d.eventId),
    ),
    // The catalog's summary fields of each event's type, read from its data (lib/catalog/summary-values.ts).
    findSummaryData(
      db,
      found.items.map((d) => d.eventId),
    ),
    // By subject value only when nothing was delivered for it: then "received, nobody subscribed" is the answer.
    findUnroutedEvents(db, q, UNROUTED_LIMIT, scope, { bySubject: found.items.length === 0 }),
  ]);
  return {
    q,
    deliveries: withTries.map((d) => {
      const sum = summaries.get(d.eventId);
      return { ...d, subject: subjects.get(d.eventId) ?? {}, ...(sum ? { summary: summaryValues(sum.data, sum.fields) } : {}) };
    }),
    // Every reader of the lookup is shown the URL with its credentials masked (lib/display-url.ts).
    subscriptions: subs.slice(0, SUBSCRIPTION_MATCHES).map((s) => ({ ...s, url: displayUrl(s.url) })),
    truncated: found.truncated,
    subscriptionsTruncated: subs.length > SUBSCRIPTION_MATCHES,
    unrouted,
  };
}
