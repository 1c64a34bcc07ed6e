// The DLQ as the sampler saw it (lib/dlq/sampler.ts): depth and oldest age now,
// broken down by subscription and reason, and their history for the charts.
// Requests read dlq_samples / dlq_sample_groups only; when no recent sample
// exists (the sampler is not running, e.g. the CLI) the summary is computed
// from the deliveries_dlq partial index instead, and says so. The statements
// are the ledger's (lib/ledger/sql/dlq.ts).
import "server-only";
import { z } from "zod";
import { iso, ledgerDb, queryRows, sql, type LedgerDb } from "../ledger/read/db";
import { findDlqGroupsLive, findDlqHistoryRows, findDlqSampleGroups, findLatestDlqSampleAt, type DlqGroupRow } from "../ledger/sql/dlq";
import { GLOBAL_SCOPE, type Scope } from "../tenants/scope";

export type DlqGroup = {
  subscriptionId: string;
  subscriptionName: string | null;
  reason: string | null;
  errorClass: string | null;
  statusCode: number | null;
  depth: number;
  oldestAt: string | null;
};
export type DlqSummary = {
  depth: number;
  oldestAgeSeconds: number | null;
  sampledAt: string;
  source: "sample" | "live";
  bySubscription: { subscriptionId: string; subscriptionName: string | null; depth: number; oldestAgeSeconds: number | null }[];
  byReason: { reason: string | null; depth: number; oldestAgeSeconds: number | null }[];
  groups: DlqGroup[];
};

// A sample older than this is stale: the summary is computed live instead.
const FRESH_MS = 2 * 60_000;

/** `scope`: a scoped caller's summary counts its tenant's dead letters only (lib/tenants/scope.ts). */
export async function getDlqSummary(opts: { now?: Date; subscriptionId?: string; scope?: Scope } = {}, db: LedgerDb = ledgerDb()): Promise<DlqSummary> {
  const now = opts.now ?? new Date();
  const scope = opts.scope ?? GLOBAL_SCOPE;
  const latest = await findLatestDlqSampleAt(db);
  let rows: DlqGroupRow[];
  let sampledAt: Date;
  let source: DlqSummary["source"];
  if (latest && now.getTime() - latest.getTime() < FRESH_MS) {
    sampledAt = latest;
    source = "sample";
    rows = await findDlqSampleGroups(db, sampledAt, scope);
  } else {
    sampledAt = now;
    source = "live";
    rows = await findDlqGroupsLive(db, scope);
  }
  let groups: Omit<DlqGroup, "subscriptionName">[] = rows.map((r) => ({ ...r, oldestAt: iso(r.oldestAt) }));
  if (opts.subscriptionId) groups = groups.filter((g) => g.subscriptionId === opts.subscriptionId);
  const subIds = [...new Set(groups.map((g) => g.subscriptionId))];
  const names = new Map<string, string>();
  if (subIds.length) {
    const rows = await queryRows<{ id: string; name: string }>(db, sql`SELECT id, name FROM subscriptions WHERE id = ANY(${subIds}::text[])`);
    for (const r of rows) names.set(r.id, r.name);
  }
  const age = (at: string | null) => (at ? Math.max(0, Math.round((now.getTime() - new Date(at).getTime()) / 1000)) : null);
  const older = (a: string | null, b: string | null) => (!a ? b : !b ? a : a < b ? a : b);
  const roll = <K extends string | null>(key: (g: (typeof groups)[number]) => K) => {
    const m = new Map<K, { depth: number; oldestAt: string | null }>();
    for (const g of groups) {
      const k = key(g);
      const cur = m.get(k) ?? { depth: 0, oldestAt: null };
      m.set(k, { depth: cur.depth + g.depth, oldestAt: older(cur.oldestAt, g.oldestAt) });
    }
    return [...m.entries()].sort((a, b) => b[1].depth - a[1].depth);
  };
  const depth = groups.reduce((s, g) => s + g.depth, 0);
  const oldest = groups.reduce<string | null>((o, g) => older(o, g.oldestAt), null);
  return {
    depth,
    oldestAgeSeconds: age(oldest),
    sampledAt: sampledAt.toISOString(),
    source,
    bySubscription: roll((g) => g.subscriptionId).map(([id, v]) => ({
      subscriptionId: id,
      subscriptionName: names.get(id) ?? null,
      depth: v.depth,
      oldestAgeSeconds: age(v.oldestAt),
    })),
    byReason: roll((g) => g.reason).map(([reason, v]) => ({ reason, depth: v.depth, oldestAgeSeconds: age(v.oldestAt) })),
    groups: groups.map((g) => ({ ...g, subscriptionName: names.get(g.subscriptionId) ?? null })).sort((a, b) => b.depth - a.depth),
  };
}

export const ZDlqHistory = z.object({ hours: z.coerce.number().int().min(1).max(168).default(24) });

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };

/** Depth and oldest age over the last `hours`, downsampled to at most ~240 points (dlq_samples pk). */
export async function findDlqHistory(
  opts: { hours?: number; now?: Date; scope?: Scope } = {},
  db: LedgerDb = ledgerDb(),
): Promise<{ points: DlqPoint[]; bucketSeconds: number }> {
  const { hours } = ZDlqHistory.parse({ hours: opts.hours });
  const now = opts.now ?? new Date();
  const since = new Date(now.getTime() - hours * 3600_000);
  const bucketSeconds = Math.max(15, Math.ceil((hours * 3600) / 240 / 15) * 15);
  const rows = await findDlqHistoryRows(db, since, now, bucketSeconds, opts.scope ?? GLOBAL_SCOPE);
  return {
    bucketSeconds,
    points: rows.map((r) => ({ at: iso(r.at)!, depth: r.depth, oldestAgeSeconds: r.oldestAgeSeconds === null ? null : Math.round(r.oldestAgeSeconds) })),
  };
}
