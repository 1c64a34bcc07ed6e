// Single redrive on the delivery page. A server component: it asks the
// session whether the viewer may redrive (the permission table; docs/STYLE.md #4)
// and, for roles that may not, says whom to ask about a dead letter. The server enforces the same
// rule (403); hiding the button is a courtesy.
//
// From a client component, render <RedriveDeliveryControl> instead and pass
// it only when can(viewer.role, "deliveries.redrive"): engineers, admins and managers, a district's portal included.
import { can } from "@/lib/auth/permissions";
import { getViewer } from "@/lib/auth/session";
import { RedriveDeliveryControl } from "./RedriveDeliveryControl";
import { redriveHint } from "@/components/dashboard/page-access";

export async function RedriveDeliveryButton({ deliveryId, state }: { deliveryId: string; state: string }) {
  const viewer = await getViewer();
  if (!viewer) return null;
  if (!can(viewer.role, "deliveries.redrive")) {
    // A dead letter stays one until someone sends it again: say who, rather than leave the viewer with nothing to do.
    const hint = state === "dead_letter" ? redriveHint({ role: viewer.role, portal: viewer.kind === "portal", district: Boolean(viewer.tenantId) }, "delivery") : null;
    return hint ? (
      <p className="text-sm text-slate-700" data-testid="redrive-hint">
        {hint}
      </p>
    ) : null;
  }
  // A district (its portal or its own account) sends its own delivery again, in its words.
  return <RedriveDeliveryControl deliveryId={deliveryId} state={state} district={Boolean(viewer.tenantId)} />;
}
