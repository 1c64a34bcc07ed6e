import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { findDlqHistory, ZDlqHistory } from "@/lib/dashboard/dead-letters";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** DLQ depth and oldest age over time, from the sampler's dlq_samples. `hours`: 1–168, default 24. */
export const GET = apiRoute("dlq.read", async ({ req, principal }) =>
  json(await findDlqHistory({ ...parseQuery(req, ZDlqHistory.strict()), scope: scopeOf(principal) })),
);
