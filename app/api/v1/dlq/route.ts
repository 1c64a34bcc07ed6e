import { z } from "zod";
import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { getDlqSummary } from "@/lib/dashboard/dead-letters";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

// docs/API.md: {depth, oldestAgeSeconds, countedAt, bySubscription, byReason,
// bySubscriptionAndReason}, counted from the ledger at each call; and groups
// (by subscription, reason, error class and status: redrive filters), each
// with the sample time when it is the sampler's (groupsSampledAt).
export const GET = apiRoute("dlq.read", async ({ req, principal }) => {
  const q = parseQuery(req, z.object({ subscriptionId: z.string().max(64).optional() }).strict());
  return json(await getDlqSummary({ subscriptionId: q.subscriptionId, scope: scopeOf(principal) }));
});
