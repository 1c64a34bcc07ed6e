// The event catalog's rows (migration 0041): listing them with the subscriptions that take each type, and creating,
// changing and deleting them, each change audited in its own transaction. The catalog is global: every reader sees
// every type, and only the subscriptions it may see are named; only a global engineer or admin changes it
// (lib/auth/permissions.ts, event_types.manage is global-only).
import "server-only";
import { Prisma } from "../generated/prisma/client";
import type { PrismaClient, Tx } from "../db/prisma";
import { AppError, notFound } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { scopeOf } from "../tenants/scope";
import { compileSchema, schemaIssues } from "./json-schema";
import { invalidatePublishCatalog } from "./publish-check";
import { hasEventsOfType } from "../ledger/sql/event-type-usage";
import { ZCreateEventType, ZUpdateEventType, type TCreateEventType, type TUpdateEventType } from "./event-type-input";

type Json = Record<string, unknown>;
/** A subscription that receives the type (it names it, or takes every type with `*`). */
type EventTypeSubscription = { id: string; name: string; tenant: string | null; state: string };
export type EventTypeView = {
  type: string;
  description: string;
  schema: Json | null;
  example: Json | null;
  summaryFields: string[];
  deprecated: boolean;
  createdAt: string;
  updatedAt: string;
  /** The first SUBSCRIPTIONS_SHOWN of them by name; `subscriptionCount` says how many there are in all. */
  subscriptions: EventTypeSubscription[];
  subscriptionCount: number;
};

/** How many of a type's subscriptions a view names: a global operator's type can be taken by thousands. */
const SUBSCRIPTIONS_SHOWN = 50;
/** Past this many subscriptions a type's first names are walked off the name index (subscriptionsByType). */
const WALKED_FROM = 1_000;
type Row = Awaited<ReturnType<PrismaClient["eventType"]["findFirstOrThrow"]>>;

function toView(r: Row, { subscriptions, count }: Taking): EventTypeView {
  return {
    type: r.type,
    description: r.description,
    schema: (r.schema as Json | null) ?? null,
    example: (r.example as Json | null) ?? null,
    summaryFields: r.summaryFields,
    deprecated: r.deprecated,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    subscriptions,
    subscriptionCount: count,
  };
}

type Taking = { subscriptions: EventTypeSubscription[]; count: number };
type TakingRow = EventTypeSubscription & { t: string; n: number };

/**
 * The live (not archived) subscriptions the principal may see that take each of `types` ("*" for every type): the first
 * SUBSCRIPTIONS_SHOWN of each by name and how many there are. Counted in the statement, so no subscription is left
 * out of a count however many there are. A subscription that takes "*" is counted under "*" only, so adding the two
 * counts never counts it twice; one that names a type twice, once.
 *
 * The count is one pass over the subscriptions, hashed by type. A type taken by more than WALKED_FROM has its first
 * names walked off the name index (subscriptions_by_name), which stops at SUBSCRIPTIONS_SHOWN after reading about
 * SUBSCRIPTIONS_SHOWN × subscriptions / n entries; the others (a walk would read most of the index for each) are
 * numbered by name among themselves only. Numbering every subscription's types in one window sorted them all on every
 * read of the catalog (and of each subscription's page, which asks for the types): 53 ms at 10,000 subscriptions, now
 * 15 ms; with 500 more types each taken by one subscription, 43 ms and now 20 ms.
 */
async function subscriptionsByType(prisma: PrismaClient, principal: Principal, types: string[]): Promise<Map<string, Taking>> {
  const scope = scopeOf(principal);
  // The scope as subscriptionWhere (lib/tenants/scope.ts) states it for Prisma: its tenant, and its one subscription for a portal opened for one.
  const inScope =
    scope.tenantId === null
      ? Prisma.sql`true`
      : scope.subscriptionId
        ? Prisma.sql`s.tenant = ${scope.tenantId} AND s.id = ${scope.subscriptionId}`
        : Prisma.sql`s.tenant = ${scope.tenantId}`;
  const taken = Prisma.sql`CROSS JOIN LATERAL (SELECT DISTINCT t FROM unnest(CASE WHEN '*' = ANY(s.event_types) THEN ARRAY['*'] ELSE s.event_types END) AS t) x`;
  const rows = await prisma.$queryRaw<TakingRow[]>(Prisma.sql`
    WITH counted AS (
      SELECT x.t, count(*)::int AS n FROM subscriptions s ${taken}
       WHERE s.archived_at IS NULL AND ${inScope} AND x.t = ANY(${[...types, "*"]}::text[])
       GROUP BY x.t
    ), common AS (
      SELECT f.id, f.name, f.tenant, f.state, c.t, c.n
        FROM counted c
       CROSS JOIN LATERAL (
         SELECT s.id, s.name, s.tenant, s.state FROM subscriptions s
          WHERE s.archived_at IS NULL AND ${inScope}
            AND CASE WHEN c.t = '*' THEN '*' = ANY(s.event_types) ELSE s.event_types @> ARRAY[c.t] AND NOT '*' = ANY(s.event_types) END
          ORDER BY lower(s.name), s.id LIMIT ${SUBSCRIPTIONS_SHOWN}) f
       WHERE c.n > ${WALKED_FROM}
    ), rare AS (
      SELECT s.id, s.name, s.tenant, s.state, x.t, c.n, row_number() OVER (PARTITION BY x.t ORDER BY lower(s.name), s.id) AS rn
        FROM subscriptions s ${taken}
        JOIN counted c ON c.t = x.t AND c.n <= ${WALKED_FROM}
       WHERE s.archived_at IS NULL AND ${inScope} AND s.event_types && (SELECT coalesce(array_agg(t), '{}') FROM counted WHERE n <= ${WALKED_FROM})
    )
    SELECT * FROM (SELECT id, name, tenant, state, t, n FROM common UNION ALL SELECT id, name, tenant, state, t, n FROM rare WHERE rn <= ${SUBSCRIPTIONS_SHOWN}) u
     ORDER BY t, lower(name), id`);
  const out = new Map<string, Taking>();
  for (const r of rows) {
    const entry = out.get(r.t) ?? { subscriptions: [], count: r.n };
    entry.subscriptions.push({ id: r.id, name: r.name, tenant: r.tenant, state: r.state });
    out.set(r.t, entry);
  }
  return out;
}

const byName = (a: EventTypeSubscription, b: EventTypeSubscription) => {
  const x = a.name.toLowerCase();
  const y = b.name.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

/** A type's subscriptions: those naming it and those taking "*", the first SUBSCRIPTIONS_SHOWN by name, and the count of both. */
function taking(byType: Map<string, Taking>, type: string): Taking {
  const own = byType.get(type) ?? { subscriptions: [], count: 0 };
  const all = byType.get("*") ?? { subscriptions: [], count: 0 };
  return { subscriptions: [...own.subscriptions, ...all.subscriptions].sort(byName).slice(0, SUBSCRIPTIONS_SHOWN), count: own.count + all.count };
}

/** Every catalogued type, by name, each with the subscriptions (the caller's own, when it is scoped) that take it. */
export async function listEventTypes(prisma: PrismaClient, principal: Principal): Promise<EventTypeView[]> {
  const rows = await prisma.eventType.findMany({ orderBy: { type: "asc" } });
  const byType = await subscriptionsByType(
    prisma,
    principal,
    rows.map((r) => r.type),
  );
  return rows.map((r) => toView(r, taking(byType, r.type)));
}

export async function getEventType(prisma: PrismaClient, principal: Principal, type: string): Promise<EventTypeView> {
  const row = await prisma.eventType.findUnique({ where: { type } });
  if (!row) throw notFound("Event type", type);
  return toView(row, taking(await subscriptionsByType(prisma, principal, [type]), type));
}

/** 400 naming `schema` when it does not compile, or `example` (with each mismatch) when the example fails it. */
function assertSchemaAndExample(schema: Json | null | undefined, example: Json | null | undefined): void {
  if (schema === null || schema === undefined) return;
  const c = compileSchema(schema);
  if ("error" in c) throw new AppError("validation_failed", `schema: the JSON Schema does not compile: ${c.error}`, [{ path: "schema", message: c.error }]);
  if (example === null || example === undefined) return;
  const issues = schemaIssues(c.validate, example);
  if (issues.length)
    throw new AppError(
      "validation_failed",
      `example: the example does not match its own schema: ${issues[0].path || "(the example)"} ${issues[0].message}`,
      issues.map((i) => ({ path: `example${i.path}`, message: i.message })),
    );
}

const jsonOrNull = (v: Json | null | undefined) => (v === null || v === undefined ? Prisma.DbNull : (v as Prisma.InputJsonValue));

async function audited<T>(prisma: PrismaClient, change: (tx: Tx) => Promise<T>): Promise<T> {
  const out = await prisma.$transaction(change);
  invalidatePublishCatalog();
  return out;
}

export async function createEventType(prisma: PrismaClient, principal: Principal, input: TCreateEventType): Promise<EventTypeView> {
  const v = ZCreateEventType.parse(input);
  assertSchemaAndExample(v.schema, v.example);
  const row = await audited(prisma, async (tx) => {
    if (await tx.eventType.findUnique({ where: { type: v.type }, select: { type: true } }))
      throw new AppError("conflict", `Event type ${v.type} is already in the catalog; change it with PUT /api/v1/event-types/${v.type}.`);
    const r = await tx.eventType.create({
      data: {
        type: v.type,
        description: v.description,
        schema: jsonOrNull(v.schema),
        example: jsonOrNull(v.example),
        summaryFields: v.summaryFields ?? [],
        createdBy: principal.actor,
        updatedBy: principal.actor,
      },
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "event_type.create",
      targetType: "event_type",
      targetId: r.type,
      details: { description: r.description, hasSchema: r.schema !== null },
    });
    return r;
  });
  return getEventType(prisma, principal, row.type);
}

export async function updateEventType(prisma: PrismaClient, principal: Principal, type: string, input: TUpdateEventType): Promise<EventTypeView> {
  const v = ZUpdateEventType.parse(input);
  await audited(prisma, async (tx) => {
    const before = (await tx.$queryRaw<{ type: string }[]>`SELECT type FROM event_types WHERE type = ${type} FOR UPDATE`)[0];
    if (!before) throw notFound("Event type", type);
    const current = await tx.eventType.findUniqueOrThrow({ where: { type } });
    const schema = v.schema === undefined ? (current.schema as Json | null) : v.schema;
    const example = v.example === undefined ? (current.example as Json | null) : v.example;
    // The example is checked against the schema it will have, whichever of the two changed.
    assertSchemaAndExample(schema, example);
    const changed = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
    await tx.eventType.update({
      where: { type },
      data: {
        ...(v.description === undefined ? {} : { description: v.description }),
        ...(v.schema === undefined ? {} : { schema: jsonOrNull(v.schema) }),
        ...(v.example === undefined ? {} : { example: jsonOrNull(v.example) }),
        ...(v.summaryFields === undefined ? {} : { summaryFields: v.summaryFields }),
        ...(v.deprecated === undefined ? {} : { deprecated: v.deprecated }),
        updatedAt: new Date(),
        updatedBy: principal.actor,
      },
    });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "event_type.update",
      targetType: "event_type",
      targetId: type,
      details: { changed, hasSchema: schema !== null },
    });
  });
  return getEventType(prisma, principal, type);
}

export type DeleteOutcome = { type: string; deleted: boolean; deprecated: boolean; message: string };

/** Deletes a type nothing was published as; one that has events stays, deprecated, so the catalog still explains them. */
export async function deleteEventType(prisma: PrismaClient, principal: Principal, type: string): Promise<DeleteOutcome> {
  return audited(prisma, async (tx) => {
    const row = (await tx.$queryRaw<{ type: string; schema: unknown }[]>`SELECT type, schema FROM event_types WHERE type = ${type} FOR UPDATE`)[0];
    if (!row) throw notFound("Event type", type);
    if (await hasEventsOfType(tx, type)) {
      await tx.eventType.update({ where: { type }, data: { deprecated: true, updatedAt: new Date(), updatedBy: principal.actor } });
      await writeAudit(tx, { actor: principal.actor, action: "event_type.deprecate", targetType: "event_type", targetId: type, details: { hasEvents: true } });
      return {
        type,
        deleted: false,
        deprecated: true,
        message: `Event type ${type} has events in the ledger, so it was kept and marked deprecated; it still publishes.`,
      };
    }
    await tx.eventType.delete({ where: { type } });
    await writeAudit(tx, { actor: principal.actor, action: "event_type.delete", targetType: "event_type", targetId: type, details: { hadSchema: row.schema !== null } });
    return { type, deleted: true, deprecated: false, message: `Event type ${type} was deleted from the catalog.` };
  });
}
