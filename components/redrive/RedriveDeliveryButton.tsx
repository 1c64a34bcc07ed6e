// Single redrive on the delivery page. A server component: it asks the
// session whether the viewer may redrive (the permission table; docs/STYLE.md #4)
// and renders nothing for roles that may not. The server enforces the same
// rule (403); hiding the button is a courtesy.
//
// From a client component, render <RedriveDeliveryControl> instead and pass
// it only when can(viewer.role, "deliveries.redrive").
import { can } from "@/lib/auth/permissions";
import { getViewer } from "@/lib/auth/session";
import { RedriveDeliveryControl } from "./RedriveDeliveryControl";

export async function RedriveDeliveryButton({ deliveryId, state }: { deliveryId: string; state: string }) {
  const viewer = await getViewer();
  if (!viewer || !can(viewer.role, "deliveries.redrive")) return null;
  return <RedriveDeliveryControl deliveryId={deliveryId} state={state} />;
}
