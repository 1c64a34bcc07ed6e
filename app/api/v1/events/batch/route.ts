import { apiRoute, json, MAX_BODY_BYTES, parseQuery, readJson } from "@/lib/api/handler";
import { MAX_BATCH_BYTES, publishBatch, ZPublishBatch, ZPublishBatchQuery } from "@/lib/events/batch";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

// The envelope (a list of 1–500 events within HOOKLEDGER_MAX_BATCH_BYTES) is
// a 400/413 that writes nothing; past it, each event stands alone: 200 with one
// result per event in order (lib/events/batch.ts); with ?deliveries=false, without
// their deliveries. A bad query is a 400 before the body is read.
export const POST = apiRoute("events.publish", async ({ req, principal }) => {
  const { deliveries } = parseQuery(req, ZPublishBatchQuery);
  const { value } = await readJson(req, ZPublishBatch, { maxBytes: MAX_BATCH_BYTES, nulCheckedBySchema: true });
  // A scoped token's event for another tenant (or none) is refused on its own (403 at its index), the rest published.
  const { deprecated, ...answer } = await publishBatch(value, { maxEventBytes: MAX_BODY_BYTES, scope: scopeOf(principal), deliveries });
  // As for a single publish: an event of a deprecated type still publishes, and `Deprecation: true` tells the producer to move off it.
  return json(answer, 200, deprecated ? { deprecation: "true" } : {});
});
