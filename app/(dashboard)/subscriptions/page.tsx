import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { findEventTypeChoices, findSubscriptionHealthPage, findTenants } from "@/lib/dashboard/subscriptions";
import { SUBSCRIPTION_SORTS, type SubscriptionSort } from "@/lib/subscriptions/subscription-input";
import { AppError } from "@/lib/errors";
import { SubscriptionsClient, type ListState } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** Rows a page: each poll reads their health figures, so a page costs the same at 50 subscriptions and at 50,000. */
const PAGE_SIZE = 50;

type Params = { q?: string; sort?: string; state?: string; tenant?: string; archived?: string; cursor?: string };

const one = (v: unknown, max: number) => (typeof v === "string" && v.trim() ? v.trim().slice(0, max) : "");

export default async function SubscriptionsPage({ searchParams }: { searchParams: Promise<Params> }) {
  const viewer = await requireViewer("subscriptions.read");
  const p = await searchParams;
  // The page's state lives in its URL (q, sort, filters, cursor), so a reload or a shared link shows the same page.
  const state: ListState = {
    q: one(p.q, 200),
    sort: (SUBSCRIPTION_SORTS as readonly string[]).includes(p.sort ?? "") ? (p.sort as SubscriptionSort) : "name",
    state: p.state === "active" || p.state === "paused" || p.state === "disabled" ? p.state : "",
    tenant: one(p.tenant, 200),
    archived: p.archived === "true",
    cursor: one(p.cursor, 1000),
  };
  const canCreate = can(viewer.role, "subscriptions.create");
  const query = {
    q: state.q || undefined,
    sort: state.sort,
    state: state.state || undefined,
    tenant: state.tenant || undefined,
    archived: state.archived ? ("true" as const) : undefined,
    cursor: state.cursor || undefined,
    limit: PAGE_SIZE,
    scope: scopeOf(viewer),
  };
  // A cursor from another sort or an old link: the first page, rather than an error page.
  const page = await findSubscriptionHealthPage(query).catch((err) => {
    if (err instanceof AppError && state.cursor) {
      state.cursor = "";
      return findSubscriptionHealthPage({ ...query, cursor: undefined });
    }
    throw err;
  });
  const [tenants, eventTypes] = await Promise.all([findTenants(undefined, scopeOf(viewer)), canCreate ? findEventTypeChoices(scopeOf(viewer)) : Promise.resolve([])]);
  return (
    <SubscriptionsClient
      initial={page}
      initialState={state}
      initialAt={Date.now()}
      pageSize={PAGE_SIZE}
      tenants={tenants.ids}
      tenantsMore={tenants.more}
      canCreate={canCreate}
      canSubscribeAll={viewer.role === "admin"}
      eventTypes={eventTypes}
    />
  );
}
