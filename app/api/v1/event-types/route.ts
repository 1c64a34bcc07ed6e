import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZCreateEventType } from "@/lib/catalog/event-type-input";
import { createEventType, listEventTypes } from "@/lib/catalog/manage-event-types";

export const dynamic = "force-dynamic";

/** The event catalog (global): every type with its description, schema, example, summary fields and the caller's subscriptions taking it. */
export const GET = apiRoute("event_types.read", async ({ principal }) => json({ items: await listEventTypes(getPrisma(), principal) }));

/** Catalogues a type → 201; 400 when the schema does not compile or the example fails it; 409 if catalogued already. */
export const POST = apiRoute("event_types.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZCreateEventType);
  return json(await createEventType(getPrisma(), principal, value), 201);
});
