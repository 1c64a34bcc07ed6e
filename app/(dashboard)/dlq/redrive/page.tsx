// Bulk redrive: filters prefilled from the query string (the DLQ page links
// here with subscriptionId, reason, errorClass, statusCode), a preview with the
// exact count and a sample, then a confirmation that names the count.
import { requireViewer } from "@/lib/auth/session";
import { getDlqSummary } from "@/lib/dashboard/dead-letters";
import { DEFAULT_RATE_PER_SECOND, MAX_RATE_PER_SECOND } from "@/lib/redrive/redrive-input";
import { BulkRedriveClient, type InitialFilter } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";
import { SUBSCRIPTION_SUGGESTIONS } from "@/components/redrive/DlqSubscriptionInput";
import { PageHeader } from "@/components/ui/kit";

export const dynamic = "force-dynamic";
export const metadata = { title: "Redrive dead letters" };

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
  // The first suggestions of the subscription field: the deepest, and the one a link named. The field asks for the others
  // as its text changes (GET /api/v1/dlq?q=), so the page is the same size when thousands of subscriptions have dead letters.
  const { bySubscription, subscriptionCount } = await getDlqSummary({ scope, subscriptionLimit: SUBSCRIPTION_SUGGESTIONS, include: initial.subscriptionId || undefined });
  return (
    <section className="space-y-4">
      <PageHeader
        title="Redrive dead letters"
        description="Choose what to send again, preview exactly what matches, say why, and pick a rate the district can take. The batch runs in the workers at that rate, beside fresh traffic, skips anything delivered meanwhile, and can be cancelled."
      />
      <BulkRedriveClient
        initial={initial}
        subscriptions={bySubscription.map((s) => ({ id: s.subscriptionId, name: s.subscriptionName, deadLetters: s.depth }))}
        subscriptionCount={subscriptionCount}
        defaultRate={DEFAULT_RATE_PER_SECOND}
        maxRate={MAX_RATE_PER_SECOND}
      />
    </section>
  );
}
