import { apiRoute, json, readJson } from "@/lib/api/handler";
import { ZCreateEvent } from "@/lib/events/event-input";
import { ingestEvent } from "@/lib/events/ingest";
import { refusalFor, visibleDeliveries } from "@/lib/events/publish";
import { publishTenantError, scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

// Validated here (a 4xx changes nothing), then written grouped with concurrent
// publishes in one statement per group (lib/events/ingest.ts).
export const POST = apiRoute("events.publish", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateEvent);
  const scope = scopeOf(principal);
  // A scoped token publishes for its own tenant only (403, nothing written).
  const refused = publishTenantError(scope, value.subject?.tenant);
  if (refused) throw refused;
  // A scoped token is told neither whose an id it collided with is, nor of deliveries outside its tenant.
  const r = await ingestEvent(value, { subscriptionTenants: scope.tenantId !== null }).catch((err: unknown) => {
    throw refusalFor(scope, err);
  });
  return json({ eventId: r.eventId, deliveries: visibleDeliveries(r, scope) }, r.created ? 202 : 200);
});
