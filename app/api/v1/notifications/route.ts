import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { ledgerDb } from "@/lib/ledger/read/db";
import { listNotifications } from "@/lib/ledger/sql/notifications";
import { scopeOf } from "@/lib/tenants/scope";
import { ZNotificationsQuery } from "@/lib/notify/input";

export const dynamic = "force-dynamic";

/** The notices sent to districts (or not, and why), newest first; a scoped caller's own tenant's only. `?limit=&before=<createdAt>`. */
export const GET = apiRoute("notifications.read", async ({ req, principal }) => {
  const q = parseQuery(req, ZNotificationsQuery);
  const items = await listNotifications(ledgerDb(), scopeOf(principal), { limit: q.limit, before: q.before ? new Date(q.before) : null });
  return json({ items, nextBefore: items.length === q.limit ? (items.at(-1)?.createdAt ?? null) : null });
});
