import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZUpdateEventType } from "@/lib/catalog/event-type-input";
import { deleteEventType, getEventType, updateEventType } from "@/lib/catalog/manage-event-types";

export const dynamic = "force-dynamic";

export const GET = apiRoute("event_types.read", async ({ params, principal }) => json(await getEventType(getPrisma(), principal, params.type)));

/** Sets the fields given (null removes a schema or example); 404 for a type not in the catalog. */
export const PUT = apiRoute("event_types.manage", async ({ req, params, principal }) => {
  const { value } = await readJson(req, ZUpdateEventType);
  return json(await updateEventType(getPrisma(), principal, params.type, value));
});

/** Deletes the type, or, when events of it exist, keeps it marked deprecated: 200 either way, saying which. */
export const DELETE = apiRoute("event_types.manage", async ({ params, principal }) => json(await deleteEventType(getPrisma(), principal, params.type)));
