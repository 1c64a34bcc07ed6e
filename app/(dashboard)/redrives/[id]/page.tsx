// One redrive batch's live progress: matched, redriven, skipped, delivered
// since, failed again; a cancel button for those who may cancel.
import { notFound } from "next/navigation";
import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { getRedriveBatch } from "@/lib/redrive/redrive-batches";
import { RedriveBatchClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export default async function RedriveBatchPage({ params }: { params: Promise<{ id: string }> }) {
  const viewer = await requireViewer("dlq.read");
  const { id } = await params;
  const batch = await getRedriveBatch(getPrisma(), id, scopeOf(viewer)).catch((err) => {
    if (err instanceof AppError && err.code === "not_found") notFound();
    throw err;
  });
  return <RedriveBatchClient initial={batch} initialAt={Date.now()} canCancel={can(viewer.role, "redrives.cancel")} />;
}
