import { apiRoute, json } from "@/lib/api/handler";
import { findEndpointAnswers } from "@/lib/dashboard/subscriptions";

export const dynamic = "force-dynamic";

/** What the endpoint has been answering, grouped by status and response signature. */
export const GET = apiRoute("subscriptions.read", async ({ params }) => json(await findEndpointAnswers({ subscriptionId: params.id })));
