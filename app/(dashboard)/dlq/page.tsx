import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { findDlqHistory, getDlqSummary } from "@/lib/dashboard/dead-letters";
import { DlqClient } from "./page-client";
import { defaultRangeHours, rangeFromParam } from "@/components/charts/axes";
import { scopeOf } from "@/lib/tenants/scope";
import { redriveHint } from "@/components/dashboard/page-access";

export const dynamic = "force-dynamic";
export const metadata = { title: "Dead letters" };

// Subscriptions the page lists (the deepest first): an outage that touches every district leaves a thousand with
// dead letters, and listing them all made a page of 2 MB and 20,000 elements; the rest are counted and found by search.
const SUBSCRIPTIONS_LISTED = 50;

export default async function DlqPage({ searchParams }: { searchParams: Promise<{ subscriptionId?: string; reason?: string; range?: string; q?: string }> }) {
  const viewer = await requireViewer("dlq.read");
  const sp = await searchParams;
  const scope = scopeOf(viewer);
  const asked = rangeFromParam(sp.range);
  const subscriptionId = typeof sp.subscriptionId === "string" ? sp.subscriptionId.slice(0, 64) : "";
  // The same list as the page's poll asks for (GET /api/v1/dlq?limit=&q=&include=), so the two agree.
  const list = { q: typeof sp.q === "string" ? sp.q.trim().slice(0, 200) : "", limit: SUBSCRIPTIONS_LISTED, include: subscriptionId };
  const [summary, day] = await Promise.all([
    getDlqSummary({ scope, q: list.q, subscriptionLimit: list.limit, include: list.include || undefined }),
    findDlqHistory({ hours: asked ?? 24, scope }),
  ]);
  // Without ?range= the chart opens on the window that holds the last day's changes (a drain of the last half hour
  // is the last hour, not a sliver at the right of a day).
  const hours = asked ?? defaultRangeHours(day.points, Date.now());
  const history = hours === (asked ?? 24) ? day : await findDlqHistory({ hours, scope });
  return (
    <DlqClient
      key={list.q}
      list={list}
      initial={{ summary, history, hours }}
      rangeChosen={asked !== null}
      initialAt={Date.now()}
      canRedrive={can(viewer.role, "redrives.create")}
      canResolve={can(viewer.role, "deliveries.resolve")}
      redriveHint={redriveHint({ role: viewer.role, portal: viewer.kind === "portal", district: Boolean(viewer.tenantId) }, "filter")}
      initialFilter={{ subscriptionId, reason: typeof sp.reason === "string" ? sp.reason : "" }}
    />
  );
}
