import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { ledgerDb } from "@/lib/ledger/read/db";
import { listNotificationPage } from "@/lib/ledger/sql/notifications";
import { scopeOf } from "@/lib/tenants/scope";
import { ZNotificationsQuery } from "@/lib/notify/input";

export const dynamic = "force-dynamic";

/**
 * The notices sent to districts (or not, and why), newest first; a scoped caller's own tenant's only.
 * `?tenant=` one tenant's. `?limit=&cursor=<nextCursor>`: `{items, nextCursor, nextBefore}`, both null on the last page. `before=<createdAt>`
 * (and `nextBefore`) are the first version's paging, kept for its callers.
 */
export const GET = apiRoute("notifications.read", async ({ req, principal }) => {
  const q = parseQuery(req, ZNotificationsQuery);
  const { items, nextCursor } = await listNotificationPage(ledgerDb(), scopeOf(principal), {
    limit: q.limit,
    cursor: q.cursor,
    before: q.before ? new Date(q.before) : null,
    tenant: q.tenant,
  });
  return json({ items, nextCursor, nextBefore: nextCursor ? (items.at(-1)?.createdAt ?? null) : null });
});
