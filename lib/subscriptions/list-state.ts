// What the Subscriptions page shows, read from and written to its URL. No zod here: the page's client component
// imports this, and zod in the browser needs `eval` (the CSP refuses it).

/** The orders a subscription list can be read in; a leading "-" reads it backwards. Each ends with the id, so a cursor is exact. */
export const SUBSCRIPTION_SORTS = ["name", "-name", "tenant", "-tenant", "state", "-state", "created", "-created"] as const;
export type SubscriptionSort = (typeof SUBSCRIPTION_SORTS)[number];

export type ListState = { q: string; sort: SubscriptionSort; state: "" | "active" | "paused" | "disabled"; tenant: string; archived: boolean; cursor: string };

const one = (v: string | null | undefined, max: number) => (typeof v === "string" && v.trim() ? v.trim().slice(0, max) : "");

/** The page's state from its query string; anything unknown reads as the default, so an edited link still opens a page. */
export function parseListState(get: (name: string) => string | null | undefined): ListState {
  const sort = get("sort") ?? "";
  const state = get("state");
  return {
    q: one(get("q"), 200),
    sort: (SUBSCRIPTION_SORTS as readonly string[]).includes(sort) ? (sort as SubscriptionSort) : "name",
    state: state === "active" || state === "paused" || state === "disabled" ? state : "",
    tenant: one(get("tenant"), 200),
    archived: get("archived") === "true",
    cursor: one(get("cursor"), 1000),
  };
}

/** The query string of a state (defaults left out), with the page size when it is for the API. */
export function listQueryString(s: ListState, pageSize?: number): string {
  const qs = new URLSearchParams();
  if (s.q) qs.set("q", s.q);
  if (s.sort !== "name") qs.set("sort", s.sort);
  if (s.state) qs.set("state", s.state);
  if (s.tenant) qs.set("tenant", s.tenant);
  if (s.archived) qs.set("archived", "true");
  if (s.cursor) qs.set("cursor", s.cursor);
  if (pageSize) qs.set("limit", String(pageSize));
  return qs.toString();
}
