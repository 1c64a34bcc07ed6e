// One redrive batch's live progress: matched, redriven, skipped, delivered
// since, failed again; a cancel button for those who may cancel.
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { getRedriveBatch } from "@/lib/redrive/redrive-batches";
import { RedriveBatchClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";
import { findSubscriptionNames } from "@/lib/subscriptions/manage-subscriptions";
import { batchHeading } from "@/components/redrive/batch-kind";

export const dynamic = "force-dynamic";

/** The batch as the viewer may see it, read once for the page and its title. */
const load = cache(async (id: string) => {
  const viewer = await requireViewer("dlq.read");
  return { viewer, batch: await getRedriveBatch(getPrisma(), id, scopeOf(viewer)) };
});

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const b = await load((await params).id).catch(() => null);
  return { title: b ? batchHeading(b.batch, { district: Boolean(b.viewer.tenantId) }) : "Redrive" };
}

export default async function RedriveBatchPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const { viewer, batch } = await load(id).catch((err) => {
    if (err instanceof AppError && err.code === "not_found") notFound();
    throw err;
  });
  const district = Boolean(viewer.tenantId);
  const subscriptionId = (batch.filter as { subscriptionId?: string }).subscriptionId;
  // A district names its subscription by the name it gave it, not by the id the filter holds.
  const names = district && subscriptionId ? await findSubscriptionNames(getPrisma(), [subscriptionId], scopeOf(viewer)) : {};
  return <RedriveBatchClient initial={batch} initialAt={Date.now()} canCancel={can(viewer.role, "redrives.cancel")} district={district} names={names} />;
}
