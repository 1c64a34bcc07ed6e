import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { findEventTypeChoices, findSubscriptionHealthPage, findTenants } from "@/lib/dashboard/subscriptions";
import { listQueryString, parseListState } from "@/lib/subscriptions/list-state";
import { AppError } from "@/lib/errors";
import { redirect } from "next/navigation";
import { SubscriptionsClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";
export const metadata = { title: "Subscriptions" };

/** Rows a page: each poll reads their health figures, so a page costs the same at 50 subscriptions and at 50,000. */
const PAGE_SIZE = 50;

type Params = Record<string, string | string[] | undefined>;

export default async function SubscriptionsPage({ searchParams }: { searchParams: Promise<Params> }) {
  const viewer = await requireViewer("subscriptions.read");
  const p = await searchParams;
  // The page's state lives in its URL (q, sort, filters, cursor), so a reload or a shared link shows the same page.
  const state = parseListState((name) => {
    const v = p[name];
    return Array.isArray(v) ? v[0] : v;
  });
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
  // A cursor from another sort or an old link: the first page, rather than an error page. The URL says so too, since the
  // list reads its state from the URL.
  const page = await findSubscriptionHealthPage(query).catch((err) => {
    if (err instanceof AppError && state.cursor) return null;
    throw err;
  });
  if (!page) {
    const qs = listQueryString({ ...state, cursor: "" });
    redirect(`/subscriptions${qs ? `?${qs}` : ""}`);
  }
  const [tenants, eventTypes] = await Promise.all([
    findTenants(undefined, scopeOf(viewer)),
    canCreate ? findEventTypeChoices(scopeOf(viewer)) : Promise.resolve({ types: [], more: false }),
  ]);
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
      eventTypes={eventTypes.types}
      eventTypesMore={eventTypes.more}
    />
  );
}
