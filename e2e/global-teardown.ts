// After the whole run, on the run's own database (the web server stops after this): no subscription for every district
// (no tenant) to a type every spec publishes received anything. `api()` refuses to create one; this catches one made
// any other way (a dialog, the portal, SQL) by its effect, which is to send every later spec's events to it.
import { closeE2eDb, e2eDb } from "./dashboard-seed";
import { SHARED_TYPES } from "./helpers";

export default async function globalTeardown() {
  try {
    const { rows } = await e2eDb().query(
      `SELECT s.id, s.name, count(*)::int AS deliveries
         FROM subscriptions s JOIN deliveries d ON d.subscription_id = s.id
        WHERE s.tenant IS NULL AND s.event_types && $1::text[]
        GROUP BY s.id, s.name ORDER BY 3 DESC`,
      [SHARED_TYPES],
    );
    if (rows.length > 0)
      throw new Error(
        `Subscriptions for every district to ${SHARED_TYPES.join(" or ")} received deliveries in this run, so every later spec's events went to them ` +
          `too (give each a type of its spec's own, or a tenant): ${rows.map((r) => `${r.id} “${r.name}” ${r.deliveries}`).join("; ")}`,
      );
  } finally {
    await closeE2eDb();
  }
}
