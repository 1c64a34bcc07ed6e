import { apiRoute, json, readJson } from "@/lib/api/handler";
import { ZCreateEvent } from "@/lib/events/schema";
import { ingestEvent } from "@/lib/events/ingest";

export const dynamic = "force-dynamic";

// Validated here (a 4xx changes nothing), then written grouped with concurrent
// publishes in one statement per group (lib/events/ingest.ts).
export const POST = apiRoute("events.publish", async ({ req }) => {
  const { value } = await readJson(req, ZCreateEvent);
  const r = await ingestEvent(value);
  return json({ eventId: r.eventId, deliveries: r.deliveries }, r.created ? 202 : 200);
});
