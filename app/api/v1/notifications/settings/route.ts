import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZNotificationSettings } from "@/lib/notify/input";
import { getNotificationSettings, setNotificationSettings } from "@/lib/notify/settings";

export const dynamic = "force-dynamic";

/** The operator's notification defaults: `{dlqThreshold}`, what every district without its own follows. */
export const GET = apiRoute("notifications.read", async () => json(await getNotificationSettings(getPrisma())));

/** Sets them (global admins): `{dlqThreshold}` 1–100,000 → 200; 400 naming the field, nothing saved. Audited. */
export const PUT = apiRoute("notifications.manage", async ({ req, principal }) => {
  const { value } = await readJson(req, ZNotificationSettings);
  return json(await setNotificationSettings(getPrisma(), value, principal));
});
