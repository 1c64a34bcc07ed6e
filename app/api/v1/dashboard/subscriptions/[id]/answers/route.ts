import { apiRoute, json } from "@/lib/api/handler";
import { findEndpointAnswers } from "@/lib/dashboard/subscriptions";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** What the endpoint has been answering, grouped by status and response signature. */
export const GET = apiRoute("subscriptions.read", async ({ params, principal }) =>
  json(await findEndpointAnswers({ subscriptionId: params.id, scope: scopeOf(principal) })),
);
