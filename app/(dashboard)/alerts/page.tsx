// Which of the shipped alert conditions (deploy/prometheus/alerts.yml) hold
// right now, evaluated against the database with the same thresholds.
import type { Metadata } from "next";
import { requireViewer } from "@/lib/auth/session";
import { getPool } from "@/lib/db/pool";
import { findAlertConditions } from "@/lib/metrics/alerts";
import { AlertList } from "@/components/alerts/AlertList";
import { AutoRefresh } from "@/components/alerts/AutoRefresh";
import { PageHeader } from "@/components/ui/kit";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alerts" };

export default async function AlertsPage() {
  // The conditions are the whole system's (every district's queue, dead letters and workers): alerts.read is a global account's.
  await requireViewer("alerts.read");
  const { evaluatedAt, conditions } = await findAlertConditions(getPool());
  const firing = conditions.filter((c) => c.holds).length;
  return (
    <div className="space-y-4">
      <PageHeader
        title="Alerts"
        description={
          <>
            {firing === 0 ? "No alert condition holds now." : `${firing} of ${conditions.length} alert conditions hold now.`} The same conditions page on-call through
            Prometheus (<code className="rounded bg-slate-100 px-1">deploy/prometheus/alerts.yml</code>).
          </>
        }
        actions={<AutoRefresh evaluatedAt={evaluatedAt} />}
      />
      <AlertList conditions={conditions} />
      <p className="text-xs text-slate-600">
        Prometheus scrapes <code className="rounded bg-slate-100 px-1">/metrics</code> here and each worker&apos;s metrics port; hookledger also publishes{" "}
        <code className="rounded bg-slate-100 px-1">hookledger.*</code> operational events to subscriptions that ask for them.
      </p>
    </div>
  );
}
