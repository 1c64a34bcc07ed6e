import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { ZDlqQuery, getDlqSummary } from "@/lib/dashboard/dead-letters";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

// docs/API.md: {depth, oldestAgeSeconds, countedAt, bySubscription, byReason,
// bySubscriptionAndReason}, counted from the ledger at each call; and groups
// (by subscription, reason, error class and status: redrive filters), each
// with the sample time when it is the sampler's (groupsSampledAt). ?q=, ?limit=
// and ?include= narrow the subscriptions listed (the dashboard lists the deepest
// 50), subscriptionCount and matchingSubscriptionCount say how many there are.
export const GET = apiRoute("dlq.read", async ({ req, principal }) => {
  const q = parseQuery(req, ZDlqQuery);
  return json(await getDlqSummary({ subscriptionId: q.subscriptionId, scope: scopeOf(principal), q: q.q, subscriptionLimit: q.limit, include: q.include || undefined }));
});
