import { notFound } from "next/navigation";
import { requireViewer } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { getDeliveryDetail } from "@/lib/dashboard/delivery";
import { RedriveDeliveryButton } from "@/components/redrive/RedriveDeliveryButton";
import { DeliveryDecisionButtons } from "@/components/dlq/DeliveryDecisionButtons";
import { DeliveryClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export default async function DeliveryPage({ params }: { params: Promise<{ id: string }> }) {
  const viewer = await requireViewer("deliveries.read");
  const { id } = await params;
  const detail = await getDeliveryDetail({ id, scope: scopeOf(viewer) }).catch((err) => {
    if (err instanceof AppError && err.code === "not_found") notFound();
    throw err;
  });
  return (
    <DeliveryClient
      initial={detail}
      initialAt={Date.now()}
      // The engineers' controls (redrive; resolve and resend): each renders nothing for roles that may not use it.
      redrive={
        <>
          <RedriveDeliveryButton deliveryId={detail.id} state={detail.state} />
          <DeliveryDecisionButtons deliveryId={detail.id} state={detail.state} />
        </>
      }
    />
  );
}
