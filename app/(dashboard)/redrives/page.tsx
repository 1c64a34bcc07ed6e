// Paced batches (redrive, recover, backfill), newest first, optionally of one kind, a page at a time.
import { redirect } from "next/navigation";
import { getViewer, requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { findNamedRedriveBatchPage } from "@/lib/redrive/named-batches";
import { BATCH_KINDS, type BatchKind } from "@/lib/redrive/redrive-input";
import { RedriveBatchesClient } from "./page-client";
import { BATCHES_SHOWN } from "@/components/redrive/batch-kind";
import { scopeOf } from "@/lib/tenants/scope";
import { redrivesWords } from "@/components/dashboard/page-access";

export const dynamic = "force-dynamic";

/** A district reads the page under its navigation's name for it (components/dashboard/page-access.ts). */
export async function generateMetadata() {
  const viewer = await getViewer();
  return { title: viewer?.tenantId ? "Sent again" : "Redrives" };
}

export default async function RedrivesPage({ searchParams }: { searchParams: Promise<{ kind?: string | string[]; cursor?: string | string[] }> }) {
  const viewer = await requireViewer("dlq.read");
  const sp = await searchParams;
  const raw = Array.isArray(sp.kind) ? sp.kind[0] : sp.kind;
  const cursor = (Array.isArray(sp.cursor) ? sp.cursor[0] : sp.cursor)?.trim().slice(0, 1000) || null;
  // An unknown ?kind= shows every batch rather than an error page.
  const kind = (BATCH_KINDS as readonly string[]).includes(raw ?? "") ? (raw as BatchKind) : null;
  // A cursor that does not read (an edited or truncated link): the first page, and the URL says so, rather than an error page.
  const page = await findNamedRedriveBatchPage(getPrisma(), { limit: BATCHES_SHOWN, kind: kind ?? undefined, cursor: cursor ?? undefined }, scopeOf(viewer)).catch(
    (err) => {
      if (err instanceof AppError && cursor) return null;
      throw err;
    },
  );
  if (!page) redirect(kind ? `/redrives?kind=${kind}` : "/redrives");
  const district = Boolean(viewer.tenantId);
  return (
    <RedriveBatchesClient
      initial={page}
      initialAt={Date.now()}
      canCreate={can(viewer.role, "redrives.create")}
      kind={kind}
      cursor={cursor}
      district={district}
      words={redrivesWords({ role: viewer.role, portal: viewer.kind === "portal", district: Boolean(viewer.tenantId) })}
    />
  );
}
