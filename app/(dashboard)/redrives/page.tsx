// Redrive batches, newest first: the running ones and what was done before.
import { requireViewer } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { listRedriveBatches } from "@/lib/redrive/service";
import { RedriveQueryProvider } from "@/components/redrive/QueryProvider";
import { RedriveBatchesClient } from "./page-client";

export const dynamic = "force-dynamic";

export default async function RedrivesPage() {
  const viewer = await requireViewer("dlq.read");
  const batches = await listRedriveBatches(getPrisma(), { limit: 100 });
  return (
    <RedriveQueryProvider>
      <RedriveBatchesClient initial={batches} initialAt={Date.now()} canCreate={can(viewer.role, "redrives.create")} />
    </RedriveQueryProvider>
  );
}
