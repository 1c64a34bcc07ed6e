import { apiRoute, json, readJson } from "@/lib/api/handler";
import { ZCreateEvent } from "@/lib/events/event-input";
import { ingestEvent } from "@/lib/events/ingest";
import { refusalFor, visibleDeliveries } from "@/lib/events/publish";
import { publishTenantError, scopeOf } from "@/lib/tenants/scope";
import { isDeprecated, publishCatalog, schemaRefusal } from "@/lib/catalog/publish-check";

export const dynamic = "force-dynamic";

// Validated here (a 4xx changes nothing), then written grouped with concurrent
// publishes in one statement per group (lib/events/ingest.ts).
export const POST = apiRoute("events.publish", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateEvent, { nulCheckedBySchema: true });
  const scope = scopeOf(principal);
  // A scoped token publishes for its own tenant only (403, nothing written).
  const refused = publishTenantError(scope, value.subject?.tenant);
  if (refused) throw refused;
  // A type with a schema in the event catalog: data that does not match is a 422 naming each wrong field, nothing written.
  const catalog = await publishCatalog();
  const mismatch = schemaRefusal(catalog, value);
  if (mismatch) throw mismatch;
  // A scoped token is told neither whose an id it collided with is, nor of deliveries outside its tenant.
  const r = await ingestEvent(value, { subscriptionTenants: scope.tenantId !== null }).catch((err: unknown) => {
    throw refusalFor(scope, err);
  });
  // A deprecated type still publishes; `Deprecation: true` tells the producer to move off it.
  const headers: Record<string, string> = isDeprecated(catalog, value.type) ? { deprecation: "true" } : {};
  return json({ eventId: r.eventId, deliveries: visibleDeliveries(r, scope) }, r.created ? 202 : 200, headers);
});
