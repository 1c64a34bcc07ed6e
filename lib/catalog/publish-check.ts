// The publish path's view of the event catalog: which types have a schema (and the compiled validator for each),
// and which are deprecated. It is read once per request or batch from an in-process snapshot, refreshed from
// event_types at most every CATALOG_TTL_MS; a change made through this process drops the snapshot at once. Other
// dashboard processes see a change within CATALOG_TTL_MS (README "Event catalog"): for up to five seconds after a
// schema is saved, a publish through another process may still be checked against the previous one.
import "server-only";
import { AppError } from "../errors";
import { logger } from "../log";
import { queryRows, type LedgerDb } from "../ledger/read/db";
import { getPool } from "../db/pool";
import { schemaIssues, validatorFor, type SchemaIssue } from "./json-schema";

/** How long a process trusts its copy of the catalog: how soon another process's schema change reaches its publishes. */
export const CATALOG_TTL_MS = 5_000;

type CatalogRow = { type: string; schema: unknown; deprecated: boolean; updated_at: Date };
type Entry = { schema: unknown; deprecated: boolean; version: number };
/** What a publish checks an event against. */
export type PublishCatalog = ReadonlyMap<string, Entry>;

/**
 * The process's copy, kept on globalThis: the dashboard process holds this module twice, once in Next's bundle (the
 * catalog routes, which drop the copy after a change) and once in server.ts's publish fast path. Two module-level
 * copies would leave the fast path publishing against the old schema for up to CATALOG_TTL_MS after a change made
 * through this very process.
 */
const state = ((globalThis as { [k: symbol]: unknown })[Symbol.for("hookledger.publishCatalog")] ??= {
  snapshot: null,
  loading: null,
  generation: 0,
}) as { snapshot: { at: number; catalog: PublishCatalog } | null; loading: Promise<PublishCatalog> | null; generation: number };

function toCatalog(rows: CatalogRow[]): PublishCatalog {
  return new Map(rows.map((r) => [r.type, { schema: r.schema, deprecated: r.deprecated, version: new Date(r.updated_at).getTime() }]));
}

/** Types without a schema that are not deprecated change nothing at publish, so they are not read. */
const CATALOG_SQL = {
  name: "hl_publish_catalog",
  text: "SELECT type, schema, deprecated, updated_at FROM event_types WHERE schema IS NOT NULL OR deprecated",
  values: [],
};

async function load(): Promise<PublishCatalog> {
  // A change while this read is under way makes it stale: answered to its callers, never kept as the copy.
  const generation = state.generation;
  try {
    const catalog = toCatalog(await queryRows<CatalogRow>(getPool(), CATALOG_SQL));
    if (generation === state.generation) state.snapshot = { at: Date.now(), catalog };
    return catalog;
  } catch (err) {
    // The last copy, if any, is better than refusing every publish while the database blinks.
    if (state.snapshot) {
      logger.warn({ err: (err as Error).message }, "catalog: could not refresh the event catalog; publishing with the previous copy");
      return state.snapshot.catalog;
    }
    throw new AppError("unavailable", "The event catalog could not be read; try again.");
  } finally {
    if (generation === state.generation) state.loading = null;
  }
}

/** The catalog as publishes see it: the in-process copy while fresh, else one read shared by concurrent callers. */
export function publishCatalog(): Promise<PublishCatalog> | PublishCatalog {
  const { snapshot } = state;
  if (snapshot && Date.now() - snapshot.at < CATALOG_TTL_MS) return snapshot.catalog;
  return (state.loading ??= load());
}

/** Drops this process's copy: the next publish reads the catalog again (called after every catalog change). */
export function invalidatePublishCatalog(): void {
  state.generation++;
  state.snapshot = null;
  state.loading = null;
}

/** The issues of `data` against its type's schema, each path a JSON Pointer from the event (/data/…); [] when none. */
function eventIssues(catalog: PublishCatalog, type: string, data: unknown): SchemaIssue[] {
  const entry = catalog.get(type);
  if (!entry || entry.schema === null || entry.schema === undefined) return [];
  const validate = validatorFor(type, entry.version, entry.schema);
  if (!validate) {
    logger.error({ type }, "catalog: a stored schema does not compile; the type is published unchecked");
    return [];
  }
  return schemaIssues(validate, data).map((i) => ({ path: `/data${i.path}`, message: i.message }));
}

/** The 422 a publish is refused with when its data does not match the type's schema. */
function schemaMismatch(type: string, issues: SchemaIssue[]): AppError {
  const first = issues[0];
  return new AppError("schema_mismatch", `The event's data does not match the schema of ${type} in the event catalog: ${first.path} ${first.message}.`, issues);
}

/** The refusal for an event whose data fails its type's schema, or null. */
export function schemaRefusal(catalog: PublishCatalog, event: { type: string; data: unknown }): AppError | null {
  const issues = eventIssues(catalog, event.type, event.data);
  return issues.length ? schemaMismatch(event.type, issues) : null;
}

/** Whether the catalog marks `type` deprecated (it still publishes; the answer says so). */
export function isDeprecated(catalog: PublishCatalog, type: string): boolean {
  return catalog.get(type)?.deprecated === true;
}

/**
 * The check inside a producer's own transaction (publishEvent): that type's row read in the transaction, so a
 * schema saved before it began applies. One primary-key lookup; the validator is still compiled once per version.
 */
export async function schemaRefusalIn(db: LedgerDb, event: { type: string; data: unknown }): Promise<AppError | null> {
  const rows = await queryRows<CatalogRow>(db, {
    text: "SELECT type, schema, deprecated, updated_at FROM event_types WHERE type = $1 AND schema IS NOT NULL",
    values: [event.type],
  });
  return rows.length ? schemaRefusal(toCatalog(rows), event) : null;
}
