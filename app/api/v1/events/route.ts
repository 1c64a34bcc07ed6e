import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateEvent } from "@/lib/events/schema";
import { publishEventStandalone } from "@/lib/events/publish";

export const dynamic = "force-dynamic";

export const POST = apiRoute("events.publish", async ({ req }) => {
  const { value } = await readJson(req, ZCreateEvent);
  const r = await publishEventStandalone(getPrisma(), value);
  return json({ eventId: r.eventId, deliveries: r.deliveries }, r.created ? 202 : 200);
});
