import { requireViewer } from "@/lib/auth/session";
import { findSubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { getPool } from "@/lib/db/pool";
import { SubscriptionsClient } from "./page-client";

export const dynamic = "force-dynamic";

export default async function SubscriptionsPage({ searchParams }: { searchParams: Promise<{ tenant?: string }> }) {
  await requireViewer("subscriptions.read");
  const { tenant } = await searchParams;
  const t = typeof tenant === "string" && tenant ? tenant.slice(0, 200) : undefined;
  const [items, tenants] = await Promise.all([
    findSubscriptionHealth({ tenant: t }),
    getPool().query<{ tenant: string }>("SELECT DISTINCT tenant FROM subscriptions WHERE tenant IS NOT NULL ORDER BY 1 LIMIT 500"),
  ]);
  return <SubscriptionsClient initial={items} initialAt={Date.now()} tenant={t ?? ""} tenants={tenants.rows.map((r) => r.tenant)} />;
}
