import { apiRoute, json, readJson } from "@/lib/api/handler";
import { ZCreateEvent } from "@/lib/events/schema";
import { ingestEvent } from "@/lib/events/ingest";
import { publishTenantError, scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

// Validated here (a 4xx changes nothing), then written grouped with concurrent
// publishes in one statement per group (lib/events/ingest.ts).
export const POST = apiRoute("events.publish", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateEvent);
  // A scoped token publishes for its own tenant only (403, nothing written).
  const refused = publishTenantError(scopeOf(principal), value.subject?.tenant);
  if (refused) throw refused;
  const r = await ingestEvent(value);
  return json({ eventId: r.eventId, deliveries: r.deliveries }, r.created ? 202 : 200);
});
