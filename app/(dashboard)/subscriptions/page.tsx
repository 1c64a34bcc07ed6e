import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { findEventTypeChoices, findSubscriptionHealth, findTenants } from "@/lib/dashboard/subscriptions";
import { SubscriptionsClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export default async function SubscriptionsPage({ searchParams }: { searchParams: Promise<{ tenant?: string; archived?: string }> }) {
  const viewer = await requireViewer("subscriptions.read");
  const { tenant, archived } = await searchParams;
  const t = typeof tenant === "string" && tenant ? tenant.slice(0, 200) : undefined;
  const showArchived = archived === "true";
  const canCreate = can(viewer.role, "subscriptions.create");
  const [items, tenants, eventTypes] = await Promise.all([
    findSubscriptionHealth({ tenant: t, archived: showArchived, scope: scopeOf(viewer) }),
    findTenants(undefined, scopeOf(viewer)),
    canCreate ? findEventTypeChoices(scopeOf(viewer)) : Promise.resolve([]),
  ]);
  return (
    <SubscriptionsClient
      initial={items}
      initialAt={Date.now()}
      tenant={t ?? ""}
      tenants={tenants}
      showArchived={showArchived}
      canCreate={canCreate}
      canSubscribeAll={viewer.role === "admin"}
      eventTypes={eventTypes}
    />
  );
}
