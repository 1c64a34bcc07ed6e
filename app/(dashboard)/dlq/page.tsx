import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { findDlqHistory, getDlqSummary } from "@/lib/dashboard/dead-letters";
import { DlqClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export default async function DlqPage({ searchParams }: { searchParams: Promise<{ subscriptionId?: string; reason?: string }> }) {
  const viewer = await requireViewer("dlq.read");
  const sp = await searchParams;
  const [summary, history] = await Promise.all([getDlqSummary({ scope: scopeOf(viewer) }), findDlqHistory({ hours: 24, scope: scopeOf(viewer) })]);
  return (
    <DlqClient
      initial={{ summary, history }}
      initialAt={Date.now()}
      canRedrive={can(viewer.role, "redrives.create")}
      canResolve={can(viewer.role, "deliveries.resolve")}
      initialFilter={{ subscriptionId: typeof sp.subscriptionId === "string" ? sp.subscriptionId : "", reason: typeof sp.reason === "string" ? sp.reason : "" }}
    />
  );
}
