// Batch publish (POST /api/v1/events/batch): many events in one request, each
// validated and answered on its own. The valid ones join the same group
// publisher as single publishes (./ingest.ts), so a batch is written in a few
// grouped statements, not one transaction per event; an invalid event never
// reaches the database and fails only itself.
import "server-only";
import { z } from "zod";
import { AppError, fromZod } from "../errors";
import { envInt } from "../env";
import { ingestEvent } from "./ingest";
import { refusalFor, visibleDeliveries, type PublishResult } from "./publish";
import { ZCreateEvent } from "./event-input";
import { GLOBAL_SCOPE, publishTenantError, type Scope } from "../tenants/scope";
import { isDeprecated, publishCatalog, schemaRefusal } from "../catalog/publish-check";

/** Events per batch at most: a few grouped statements' worth, answered within a request timeout. */
export const MAX_BATCH_EVENTS = 500;

/**
 * HOOKLEDGER_MAX_BATCH_BYTES: the largest batch body. Each event inside it is
 * still held to the single-publish limit (HOOKLEDGER_MAX_PAYLOAD_BYTES), so a
 * batch cannot smuggle in an event a single publish would refuse.
 */
export const MAX_BATCH_BYTES = envInt("HOOKLEDGER_MAX_BATCH_BYTES", { default: 4 * 1024 * 1024, min: 1024, max: 256 * 1024 * 1024 });

/**
 * The batch envelope. Events are checked one by one afterwards (ZCreateEvent),
 * so the envelope only insists on a non-empty list of at most 500 entries.
 */
export const ZPublishBatch = z
  .object({
    events: z.array(z.unknown()).min(1, "a batch holds at least one event").max(MAX_BATCH_EVENTS, `a batch holds at most ${MAX_BATCH_EVENTS} events`),
  })
  .strict();
export type TPublishBatch = z.infer<typeof ZPublishBatch>;

/**
 * The batch's query: `deliveries=false` answers each published event with its status only, no deliveries. For a
 * backfill, which counts results and discards the rest: the deliveries were most of an answer's bytes (three ids
 * and three 64-character keys an event at fan-out 3), which the server encoded and the producer decoded and parsed
 * for nothing (BENCHMARKS.md F9). As Svix's `with_content=false` on a message.
 */
export const ZPublishBatchQuery = z
  .object({
    deliveries: z
      .enum(["true", "false"])
      .default("true")
      .transform((v) => v === "true")
      .meta({ description: "false: each result without its deliveries (status only), for a backfill that only counts them." }),
  })
  .strict();

export const ZBatchDelivery = z.object({ id: z.string(), subscriptionId: z.string(), deliveryKey: z.string() });
export const ZApiError = z.object({ code: z.string(), message: z.string(), details: z.unknown() });
const ZBatchResult = z.union([
  z.object({
    index: z.number().int(),
    id: z.string(),
    status: z.enum(["created", "duplicate"]),
    deliveries: z.array(ZBatchDelivery).optional().meta({ description: "The event's deliveries; left out when the batch was sent with deliveries=false." }),
  }),
  z.object({ index: z.number().int(), id: z.string().optional(), error: ZApiError }),
]);
export const ZPublishBatchResponse = z.object({ results: z.array(ZBatchResult) });
type TBatchResult = z.infer<typeof ZBatchResult>;
export type TPublishBatchResponse = z.infer<typeof ZPublishBatchResponse>;

function errorOf(index: number, id: string | undefined, err: AppError): TBatchResult {
  return { index, ...(id === undefined ? {} : { id }), error: err.toApi() };
}

/**
 * Publishes a validated batch envelope: one result per event, in order (with its
 * deliveries unless `deliveries` is false). Events
 * with the same id resolve to one event (the first is `created`, the rest
 * `duplicate`, as the group publisher answers a republish). An error that is
 * not the event's own (the database is gone) is thrown, failing the request:
 * whatever was written is idempotent, so the producer sends the batch again.
 * `deprecated`: an event of a type the catalog marks deprecated passed its
 * checks and went to the publisher (the route answers `Deprecation: true`, as
 * for a single publish); not part of the answer's body.
 */
export async function publishBatch(
  batch: TPublishBatch,
  opts: { maxEventBytes: number; scope?: Scope; deliveries?: boolean },
): Promise<TPublishBatchResponse & { deprecated: boolean }> {
  const withDeliveries = opts.deliveries ?? true;
  const scope = opts.scope ?? GLOBAL_SCOPE;
  // One read of the catalog for the whole batch (an in-process copy; lib/catalog/publish-check.ts).
  const catalog = await publishCatalog();
  let deprecated = false;
  const pending: Promise<TBatchResult>[] = batch.events.map((raw, index) => {
    const rawId = raw && typeof raw === "object" && typeof (raw as { id?: unknown }).id === "string" ? (raw as { id: string }).id : undefined;
    const parsed = ZCreateEvent.safeParse(raw);
    if (!parsed.success) return Promise.resolve(errorOf(index, rawId, fromZod(parsed.error, `events.${index}`)));
    const bytes = Buffer.byteLength(JSON.stringify(raw), "utf8");
    if (bytes > opts.maxEventBytes)
      return Promise.resolve(errorOf(index, rawId, new AppError("payload_too_large", `Event ${index} is ${bytes} bytes; the limit per event is ${opts.maxEventBytes}.`)));
    const refused = publishTenantError(scope, parsed.data.subject?.tenant, `events.${index}.subject.tenant`);
    if (refused) return Promise.resolve(errorOf(index, rawId, refused));
    const mismatch = schemaRefusal(catalog, parsed.data);
    if (mismatch) return Promise.resolve(errorOf(index, rawId, mismatch));
    deprecated ||= isDeprecated(catalog, parsed.data.type);
    return ingestEvent(parsed.data, { subscriptionTenants: scope.tenantId !== null }).then(
      (r: PublishResult): TBatchResult =>
        withDeliveries
          ? { index, id: r.eventId, status: r.created ? "created" : "duplicate", deliveries: visibleDeliveries(r, scope) }
          : { index, id: r.eventId, status: r.created ? "created" : "duplicate" },
      (err: unknown) => {
        // A scoped producer's conflicts say nothing of whose the id is (./publish.ts refusalFor).
        const e = refusalFor(scope, err);
        if (e instanceof AppError) return errorOf(index, rawId, e);
        throw e;
      },
    );
  });
  // allSettled first: every event is answered by the publisher before the request fails.
  const settled = await Promise.allSettled(pending);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return { results: settled.map((s) => (s as PromiseFulfilledResult<TBatchResult>).value), deprecated };
}
