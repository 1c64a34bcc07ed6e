// Paced batches (redrive, recover, backfill), newest first, optionally of one kind.
import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { listRedriveBatches } from "@/lib/redrive/redrive-batches";
import { BATCH_KINDS, type BatchKind } from "@/lib/redrive/redrive-input";
import { RedriveBatchesClient } from "./page-client";
import { BATCHES_SHOWN } from "@/components/redrive/batch-kind";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export default async function RedrivesPage({ searchParams }: { searchParams: Promise<{ kind?: string }> }) {
  const viewer = await requireViewer("dlq.read");
  const { kind: raw } = await searchParams;
  // An unknown ?kind= shows every batch rather than an error page.
  const kind = (BATCH_KINDS as readonly string[]).includes(raw ?? "") ? (raw as BatchKind) : null;
  const batches = await listRedriveBatches(getPrisma(), { limit: BATCHES_SHOWN + 1, kind: kind ?? undefined, scope: scopeOf(viewer) });
  return <RedriveBatchesClient initial={batches} initialAt={Date.now()} canCreate={can(viewer.role, "redrives.create")} kind={kind} />;
}
