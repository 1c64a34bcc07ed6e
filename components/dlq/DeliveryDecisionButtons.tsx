// Resolve and resend on the delivery page. A server component: it asks the
// session whether the viewer may (the permission table; docs/STYLE.md #4) and
// renders nothing for roles that may not. The server enforces the same rule
// (403); hiding the buttons is a courtesy.
import { can } from "@/lib/auth/permissions";
import { getViewer } from "@/lib/auth/session";
import { ResolveDeliveryControl } from "./ResolveDeliveryControl";
import { ResendDeliveryControl } from "./ResendDeliveryControl";

export async function DeliveryDecisionButtons({ deliveryId, state }: { deliveryId: string; state: string }) {
  const viewer = await getViewer();
  if (!viewer) return null;
  return (
    <>
      {can(viewer.role, "deliveries.resolve") && <ResolveDeliveryControl deliveryId={deliveryId} state={state} />}
      {can(viewer.role, "deliveries.resend") && <ResendDeliveryControl deliveryId={deliveryId} state={state} />}
    </>
  );
}
