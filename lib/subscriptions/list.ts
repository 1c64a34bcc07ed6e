// Listing subscriptions one page at a time: the public GET /api/v1/subscriptions,
// the dashboard's health list (lib/dashboard/subscriptions.ts), the pickers and
// the CLI read the same page. Keyset paging: each order ends with the id, and
// the cursor carries the last row's sort keys, so a page never repeats or skips
// a row that stayed put, whatever was inserted meanwhile; an offset would.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { badPageCursor, decodePageCursor, encodePageCursor } from "../api/page-cursor";
import { join, ledgerDb, queryRows, raw, sql, type LedgerDb, type Sql } from "../ledger/read/db";
import { GLOBAL_SCOPE, scopeWhere, subscriptionWhere, type Scope } from "../tenants/scope";
import { ZListSubscriptions, type SubscriptionSort, type TListSubscriptions } from "./subscription-input";
import { toSubscriptionView, type SubscriptionView } from "./manage-subscriptions";

type SortField = "name" | "tenant" | "state" | "created";

// Each order's keys, most significant first. Fixed SQL of this file, never input (so raw is safe); a name
// sorts case-insensitively as people read it, a tenant-less subscription first among tenants ('' before any id).
const SORT_KEYS: Record<SortField, { expr: string; cast: "text" | "timestamptz" }[]> = {
  name: [
    { expr: "lower(name)", cast: "text" },
    { expr: "id", cast: "text" },
  ],
  tenant: [
    { expr: "coalesce(tenant, '')", cast: "text" },
    { expr: "lower(name)", cast: "text" },
    { expr: "id", cast: "text" },
  ],
  state: [
    { expr: "state", cast: "text" },
    { expr: "lower(name)", cast: "text" },
    { expr: "id", cast: "text" },
  ],
  // created_at travels as its text form (microseconds) and is cast back: a JavaScript Date would round it to the millisecond.
  created: [
    { expr: "created_at", cast: "timestamptz" },
    { expr: "id", cast: "text" },
  ],
};

/** The columns a page row carries: what the health list shows, plus the sort keys for the cursor. */
export type SubscriptionPageRow = {
  id: string;
  name: string;
  tenant: string | null;
  url: string;
  state: string;
  state_reason: string | null;
  paused_reason: string | null;
  archived_at: Date | null;
  archive_reason: string | null;
  archived_by: string | null;
  /** The failure window's current run (kept by the result write while the policy is on): its start and length. */
  failing_since: Date | null;
  failing_attempts: number;
  /** The last probe of its endpoint (while paused for failing) and its status: a 2xx after the newest failure says it may be back. */
  last_probe_at: Date | null;
  last_probe_status: number | null;
};

/** SubscriptionPageRow's columns: what the statement selects and what a page's items carry (not the sort keys). */
const PAGE_COLUMNS = [
  "id",
  "name",
  "tenant",
  "url",
  "state",
  "state_reason",
  "paused_reason",
  "archived_at",
  "archive_reason",
  "archived_by",
  "failing_since",
  "failing_attempts",
  "last_probe_at",
  "last_probe_status",
] as const satisfies readonly (keyof SubscriptionPageRow)[];

const BAD_CURSOR = "not a nextCursor this list answered for this sort; start again without cursor";
const badCursor = () => badPageCursor(BAD_CURSOR);

// The cursor is opaque to callers: base64url of [sort, "a" (the rows after) or "b" (the rows before), ...a row's
// keys]. It names its sort, so a cursor reused under another order is refused instead of starting somewhere arbitrary.
type Direction = "a" | "b";

function encodeCursor(sort: SubscriptionSort, dir: Direction, keys: string[]): string {
  return encodePageCursor([sort, dir, ...keys]);
}

function decodeCursor(cursor: string, sort: SubscriptionSort, n: number): { dir: Direction; keys: string[] } {
  const parsed = decodePageCursor(cursor, BAD_CURSOR);
  if (parsed.length !== n + 2 || parsed[0] !== sort || (parsed[1] !== "a" && parsed[1] !== "b")) throw badCursor();
  const keys = parsed.slice(2) as unknown[];
  if (!keys.every((x): x is string => typeof x === "string" && x.length <= 2100)) throw badCursor();
  // A timestamp key must parse here rather than fail as a 500 inside the statement.
  const created = SORT_KEYS[sort.replace(/^-/, "") as SortField].findIndex((k) => k.cast === "timestamptz");
  if (created >= 0 && !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2})?|Z)?$/.test(keys[created])) throw badCursor();
  return { dir: parsed[1], keys };
}

/** A page and the cursors next to it: `nextCursor` null on the last page, `prevCursor` null on the first. */
export type SubscriptionPage<T> = { items: T[]; nextCursor: string | null; prevCursor: string | null };

/**
 * One page of subscriptions in `sort` order, filtered. A scoped caller's page holds its tenant's subscriptions only,
 * whatever `tenant`, `q` or `cursor` say (the scope is one more condition). A "before" cursor (a page's prevCursor)
 * reads the rows before it in the reverse order and turns them round, so paging back is as exact as paging on.
 */
export async function findSubscriptionPage(db: LedgerDb, input: TListSubscriptions, scope: Scope = GLOBAL_SCOPE): Promise<SubscriptionPage<SubscriptionPageRow>> {
  const o = ZListSubscriptions.parse(input);
  const field = o.sort.replace(/^-/, "") as SortField;
  const keys = SORT_KEYS[field];
  const at = o.cursor ? decodeCursor(o.cursor, o.sort, keys.length) : null;
  const back = at?.dir === "b";
  // Reading backwards flips the order; the page is turned round below.
  const desc = o.sort.startsWith("-") !== back;
  const where: Sql[] = [scopeWhere(scope, "tenant")];
  if (o.archived !== "true") where.push(sql`archived_at IS NULL`);
  if (o.tenant) where.push(sql`tenant = ${o.tenant}`);
  if (o.state) where.push(sql`state = ${o.state}`);
  if (o.q) {
    // One lower-cased text of the four fields, a unit separator between them so a match cannot span two: one LIKE
    // per row instead of four ILIKEs (about 1.7 times faster as a scan). q never holds a control character (schema.ts).
    // The URL up to its query: a reader sees a credential in the query masked (lib/display-url.ts), and a search that
    // matched it would tell the value a character at a time.
    const like = `%${o.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(sql`lower(name || E'\\x1f' || id || E'\\x1f' || regexp_replace(url, '[?#].*$', '') || E'\\x1f' || coalesce(tenant, '')) LIKE lower(${like})`);
  }
  if (at) {
    const lhs = raw(keys.map((k) => k.expr).join(", "));
    const rhs = join(
      keys.map((k, i) => sql`${at.keys[i]}::${raw(k.cast)}`),
      ", ",
    );
    where.push(desc ? sql`(${lhs}) < (${rhs})` : sql`(${lhs}) > (${rhs})`);
  }
  const orderBy = raw(keys.map((k) => `${k.expr} ${desc ? "DESC" : "ASC"}`).join(", "));
  const sortKeys = raw(keys.map((k, i) => `(${k.expr})::text AS k${i}`).join(", "));
  const rows = await queryRows<SubscriptionPageRow & Record<`k${number}`, string>>(
    db,
    sql`SELECT ${raw(PAGE_COLUMNS.join(", "))}, ${sortKeys}
          FROM subscriptions WHERE ${join(where, " AND ")}
         ORDER BY ${orderBy} LIMIT ${o.limit + 1}`,
  );
  const more = rows.length > o.limit;
  const page = rows.slice(0, o.limit);
  if (back) page.reverse();
  const keysOf = (r: (typeof rows)[number]) => keys.map((_, i) => r[`k${i}`]);
  // An empty page (its rows deleted meanwhile, or a cursor past the end) has no row to stand next to: no cursors.
  const first = page.length > 0 ? keysOf(page[0]) : null;
  const last = page.length > 0 ? keysOf(page[page.length - 1]) : null;
  return {
    items: page.map((r) => Object.fromEntries(PAGE_COLUMNS.map((c) => [c, r[c]])) as SubscriptionPageRow),
    // Read forwards, there is a next page when the statement found one row more; read backwards, the page it came from.
    nextCursor: last && (back || more) ? encodeCursor(o.sort, "a", last) : null,
    prevCursor: first && (back ? more : at !== null) ? encodeCursor(o.sort, "b", first) : null,
  };
}

/** GET /api/v1/subscriptions: a page of subscriptions as the API shows one (never a secret). */
export async function listSubscriptionPage(
  prisma: PrismaClient,
  input: TListSubscriptions,
  scope: Scope = GLOBAL_SCOPE,
  db: LedgerDb = ledgerDb(),
): Promise<SubscriptionPage<SubscriptionView>> {
  const page = await findSubscriptionPage(db, input, scope);
  const ids = page.items.map((r) => r.id);
  // The page's order and membership are the statement's; the full rows are read by primary key, in scope again, so a
  // row moved to another tenant between the two reads is left out rather than shown.
  const full = new Map((await prisma.subscription.findMany({ where: { id: { in: ids }, ...subscriptionWhere(scope) } })).map((s) => [s.id, s]));
  return { items: ids.flatMap((id) => (full.has(id) ? [toSubscriptionView(full.get(id)!)] : [])), nextCursor: page.nextCursor, prevCursor: page.prevCursor };
}
