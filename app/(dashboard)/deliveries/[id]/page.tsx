import { notFound } from "next/navigation";
import { requireViewer } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { getDeliveryDetail } from "@/lib/dashboard/delivery";
import { RedriveDeliveryButton } from "@/components/redrive/RedriveDeliveryButton";
import { DeliveryClient } from "./page-client";

export const dynamic = "force-dynamic";

export default async function DeliveryPage({ params }: { params: Promise<{ id: string }> }) {
  await requireViewer("deliveries.read");
  const { id } = await params;
  const detail = await getDeliveryDetail({ id }).catch((err) => {
    if (err instanceof AppError && err.code === "not_found") notFound();
    throw err;
  });
  return (
    <DeliveryClient
      initial={detail}
      initialAt={Date.now()}
      // The redrive engineer's control (components/redrive): renders nothing for roles that may not redrive.
      redrive={<RedriveDeliveryButton deliveryId={detail.id} state={detail.state} />}
    />
  );
}
