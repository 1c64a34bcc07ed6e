import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { requireViewer } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { getDeliveryDetail } from "@/lib/dashboard/delivery";
import { RedriveDeliveryButton } from "@/components/redrive/RedriveDeliveryButton";
import { DeliveryDecisionButtons } from "@/components/dlq/DeliveryDecisionButtons";
import { DeliveryClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";
import { aboutEvent } from "@/lib/dashboard/describe";

export const dynamic = "force-dynamic";

/** The delivery as the viewer may see it, read once for the page and its title. */
const load = cache(async (id: string) => getDeliveryDetail({ id, scope: scopeOf(await requireViewer("deliveries.read")) }));

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const d = await load((await params).id).catch(() => null);
  return { title: d ? `${aboutEvent(d.eventType, d.subject)} · ${d.subscriptionName}` : "Delivery" };
}

export default async function DeliveryPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const detail = await load(id).catch((err) => {
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
