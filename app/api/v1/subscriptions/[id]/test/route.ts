import { apiRoute, json, readJson } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { ZTestSend, recentTestSends, sendTest } from "@/lib/net/test-send";
import { assertSubscriptionVisible } from "@/lib/tenants/manage-tenants";

export const dynamic = "force-dynamic";

/**
 * Sends a signed hookledger.ping (or, with `{eventId}`, that stored event's
 * bytes; with `{eventType}`, the event catalog's example of that type; each
 * marked as a test) now: 200 with the endpoint's answer, also when the
 * endpoint failed (`status` null and `error` when it did not answer). An
 * empty body is a ping.
 */
export const POST = apiRoute("subscriptions.test", async ({ req, params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  const { value } = await readJson(req, ZTestSend, { empty: {} });
  return json(await sendTest(getPrisma(), params.id, value, principal), 200, { "cache-control": "no-store" });
});

/** The subscription's 20 most recent test sends, newest first. */
export const GET = apiRoute("subscriptions.read", async ({ params, principal }) => {
  await assertSubscriptionVisible(getPrisma(), params.id, principal);
  return json({ items: await recentTestSends(getPrisma(), params.id) });
});
