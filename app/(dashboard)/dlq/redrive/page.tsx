// Bulk redrive: filters prefilled from the query string (the DLQ page links
// here with subscriptionId, reason, errorClass, statusCode), a preview with the
// exact count and a sample, then a confirmation that names the count.
import { requireViewer } from "@/lib/auth/session";
import { getPrisma } from "@/lib/db/prisma";
import { getDlqSummary } from "@/lib/dashboard/dead-letters";
import { DEFAULT_RATE_PER_SECOND, MAX_RATE_PER_SECOND } from "@/lib/redrive/redrive-input";
import { BulkRedriveClient, type InitialFilter } from "./page-client";
import { scopeOf, subscriptionWhere } from "@/lib/tenants/scope";
import { PageHeader } from "@/components/ui/kit";

export const dynamic = "force-dynamic";

function one(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? "";
}

export default async function BulkRedrivePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const viewer = await requireViewer("redrives.create");
  const q = await searchParams;
  const scope = scopeOf(viewer);
  const initial: InitialFilter = {
    subscriptionId: one(q.subscriptionId),
    deadLetterReason: one(q.reason) || one(q.deadLetterReason),
    errorClass: one(q.errorClass),
    statusCode: one(q.statusCode),
    from: one(q.from) || one(q.deadLetteredFrom),
    to: one(q.to) || one(q.deadLetteredTo),
  };
  // The subscriptions that have something to redrive (and the one a link named): at 10,000 subscriptions a choice of
  // every one was a select nobody could pick from, and most of it had no dead letters.
  const { bySubscription } = await getDlqSummary({ scope });
  const depth = new Map(bySubscription.map((b) => [b.subscriptionId, b.depth]));
  const subs = await getPrisma().subscription.findMany({
    where: { AND: [{ id: { in: [...depth.keys(), ...(initial.subscriptionId ? [initial.subscriptionId] : [])] } }, subscriptionWhere(scope), { archivedAt: null }] },
    select: { id: true, name: true, state: true },
    orderBy: [{ tenant: "asc" }, { name: "asc" }],
  });
  return (
    <section className="space-y-4">
      <PageHeader
        title="Redrive dead letters"
        description="Choose what to send again, preview exactly what matches, say why, and pick a rate the district can take. The batch runs in the workers at that rate, beside fresh traffic, skips anything delivered meanwhile, and can be cancelled."
      />
      <BulkRedriveClient
        initial={initial}
        subscriptions={subs.map((s) => ({ id: s.id, name: s.name, state: s.state, deadLetters: depth.get(s.id) ?? 0 }))}
        defaultRate={DEFAULT_RATE_PER_SECOND}
        maxRate={MAX_RATE_PER_SECOND}
      />
    </section>
  );
}
