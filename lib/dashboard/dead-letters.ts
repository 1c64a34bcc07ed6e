// The DLQ now: depth and oldest age, by subscription and reason, counted at
// each call, so a resolve, a redrive or a new dead letter shows from its
// commit. The trigger-kept counters give each subscription's depth
// (lib/ledger/sql/dead-letters.ts findDlqPairs), which ranks them; only the
// subscriptions a call lists (the deepest `subscriptionLimit` matching `q`, and
// `include`) are read further. Those that fit in LIVE_GROUP_LIMIT dead letters,
// smallest first, are read from their rows through the deliveries_dlq partial
// index (depth, oldest, and the groups a redrive filters on: error class, last
// status). A larger one's depth and oldest come from the counters and one seek
// per reason on that index, and its groups from the sampler's latest reading
// (lib/rollups/sampler.ts), marked with its time, since grouping its rows costs
// a heap read per dead letter. The others count in the totals and reasons by
// their counters, and the oldest age of each reason is found without reading
// their rows (findDlqOldestByReason; a district's by a seek per pair of its
// own), so a poll costs what it lists, not every subscription's dead letters.
// The sampler's readings also draw the charts (findDlqHistory).
import "server-only";
import { z } from "zod";
import { iso, ledgerDb, queryRows, sql, type LedgerDb } from "../ledger/read/db";
import {
  findDlqGroupsLive,
  findDlqHistoryRows,
  findDlqOldestByReason,
  findDlqPairs,
  findDlqSampleGroups,
  findLatestDlqSampleAt,
  type DlqGroupRow,
  type DlqPairRow,
} from "../ledger/sql/dead-letters";
import { GLOBAL_SCOPE, isScoped, type Scope } from "../tenants/scope";
import { DLQ_SAMPLE_MAX_GAP_SECONDS } from "../rollups/sampler";

export type DlqGroup = {
  subscriptionId: string;
  subscriptionName: string | null;
  reason: string | null;
  errorClass: string | null;
  statusCode: number | null;
  depth: number;
  oldestAt: string | null;
  /** null: counted now; else the time of the sample this group was read from. */
  sampledAt: string | null;
};
type Depth = { depth: number; oldestAgeSeconds: number | null };
export type DlqSummary = Depth & {
  /** When depth and ages were counted: this call. */
  countedAt: string;
  /** Set when some groups are the sampler's (subscriptions beyond LIVE_GROUP_LIMIT): that sample's time. */
  groupsSampledAt: string | null;
  bySubscription: ({ subscriptionId: string; subscriptionName: string | null } & Depth)[];
  byReason: ({ reason: string | null } & Depth)[];
  bySubscriptionAndReason: ({ subscriptionId: string; reason: string | null } & Depth)[];
  groups: DlqGroup[];
  /** Subscriptions with dead letters (whole scope; bySubscription may list fewer: `q`, `subscriptionLimit`). */
  subscriptionCount: number;
  /** Of those, how many match `q` (all of them without one); bySubscription lists the deepest `subscriptionLimit`. */
  matchingSubscriptionCount: number;
};

// Dead letters one call reads from the rows: about 20 ms and 9,000 buffer reads
// on a 2 GB ledger whose dead letters are spread over six months (BENCHMARKS.md
// F11).
const LIVE_GROUP_LIMIT = 10_000;
// A sample older than this is stale: the large subscriptions' groups are then read from the rows too, whatever it costs.
const FRESH_MS = 2 * 60_000;
// What one seek for a pair's oldest dead letter costs, in dead letters walked in time order (findDlqOldestByReason).
const SEEK_ROWS = 4;

const pairKey = (subscriptionId: string, reason: string | null) => `${subscriptionId}\u0000${reason ?? ""}`;
/** Ids in code-point order, as the listing's ties are broken (not the locale's). */
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const older = (a: Date | null, b: Date | null) => (!a ? b : !b ? a : a < b ? a : b);

/**
 * `scope`: a scoped caller's summary counts its tenant's dead letters only (lib/tenants/scope.ts).
 * `liveGroupLimit`: how many dead letters' groups are read from the rows (LIVE_GROUP_LIMIT).
 * `q`, `subscriptionLimit`, `include`: the subscriptions listed (bySubscription, bySubscriptionAndReason, groups) are
 * those whose id, name or tenant contains `q`, the deepest `subscriptionLimit` of them, and `include` whatever its
 * rank; the totals (depth, oldest, byReason) stay the whole scope's. Subscriptions of equal depth are listed by id.
 * A page then reads the dead letters of those it lists, the same at a thousand subscriptions with dead letters as at
 * ten; the counters and, for `q`, the names of every subscription with dead letters are still read.
 */
export async function getDlqSummary(
  opts: { now?: Date; subscriptionId?: string; scope?: Scope; liveGroupLimit?: number; q?: string; subscriptionLimit?: number; include?: string } = {},
  db: LedgerDb = ledgerDb(),
): Promise<DlqSummary> {
  const now = opts.now ?? new Date();
  const scope = opts.scope ?? GLOBAL_SCOPE;
  // Depths only first (the counters, no seek): they rank the subscriptions and decide which are listed.
  const depths = await findDlqPairs(db, { scope, subscriptionId: opts.subscriptionId, oldest: false });
  const subDepth = new Map<string, number>();
  for (const p of depths) subDepth.set(p.subscriptionId, (subDepth.get(p.subscriptionId) ?? 0) + p.depth);
  // Deepest first, then by id, as bySubscription lists them.
  const ranked = [...subDepth].sort((a, b) => b[1] - a[1] || byId(a[0], b[0])).map(([id]) => id);

  // Names and tenants: for `q`, of the subscriptions whose id, name or tenant contains it (matched in SQL); else of
  // the listed ones only.
  const needle = opts.q?.trim().toLowerCase() ?? "";
  const names = new Map<string, string>();
  const readNames = async (ids: string[], q: string) => {
    if (!ids.length) return [];
    const found = await queryRows<{ id: string; name: string }>(
      db,
      sql`SELECT id, name FROM subscriptions
           WHERE id = ANY(${ids}::text[])
             AND (${q} = '' OR strpos(lower(id), ${q}) > 0 OR strpos(lower(name), ${q}) > 0 OR strpos(lower(coalesce(tenant, '')), ${q}) > 0)`,
    );
    for (const r of found) names.set(r.id, r.name);
    return found.map((r) => r.id);
  };
  const matchingIds = needle ? new Set(await readNames(ranked, needle)) : null;
  const matching = matchingIds ? ranked.filter((id) => matchingIds.has(id)) : ranked;
  const shown = new Set(matching.slice(0, opts.subscriptionLimit ?? matching.length));
  if (opts.include && subDepth.has(opts.include)) shown.add(opts.include);
  const unnamed = [...shown].filter((id) => !names.has(id));
  if (unnamed.length) await readNames(unnamed, "");

  // The listed subscriptions that fit in LIVE_GROUP_LIMIT dead letters, smallest first, are read from their rows.
  let budget = opts.liveGroupLimit ?? LIVE_GROUP_LIMIT;
  const live: string[] = [];
  const large: string[] = [];
  for (const id of [...shown].sort((a, b) => subDepth.get(a)! - subDepth.get(b)! || byId(a, b))) {
    const depth = subDepth.get(id)!;
    if (depth <= budget) {
      live.push(id);
      budget -= depth;
    } else large.push(id);
  }

  const rows: (DlqGroupRow & { sampledAt: Date | null })[] = [];
  const pairs: DlqPairRow[] = [];
  // Read from the rows: the groups, and the pairs (depth, oldest) summed from the same rows, so the two agree.
  const fromRows = async (ids: string[]) => {
    const byPair = new Map<string, DlqPairRow>();
    for (const g of await findDlqGroupsLive(db, scope, ids)) {
      rows.push({ ...g, sampledAt: null });
      const k = pairKey(g.subscriptionId, g.reason || null);
      const p = byPair.get(k) ?? { subscriptionId: g.subscriptionId, reason: g.reason || null, depth: 0, oldestAt: null };
      byPair.set(k, { ...p, depth: p.depth + g.depth, oldestAt: older(p.oldestAt, g.oldestAt) });
    }
    pairs.push(...byPair.values());
  };
  if (live.length) await fromRows(live);
  let groupsSampledAt: Date | null = null;
  if (large.length) {
    const latest = await findLatestDlqSampleAt(db);
    if (latest && now.getTime() - latest.getTime() < FRESH_MS) {
      groupsSampledAt = latest;
      const counted = await findDlqPairs(db, { scope, subscriptionIds: large, oldest: true });
      pairs.push(...counted);
      // A pair emptied since the sample has no groups now, whatever the sample says.
      const current = new Set(counted.map((p) => pairKey(p.subscriptionId, p.reason)));
      for (const g of await findDlqSampleGroups(db, latest, scope, large))
        if (current.has(pairKey(g.subscriptionId, g.reason || null))) rows.push({ ...g, sampledAt: latest });
    } else await fromRows(large);
  }

  // The subscriptions not listed count in the totals and reasons: their depths from the counters, and the oldest
  // dead letter of each reason: for the whole DLQ, by reason through the time index (a few walks, not a read of
  // every subscription's rows); for a district or one subscription, by a seek per pair of its own.
  const unlisted = depths.filter((p) => !shown.has(p.subscriptionId));
  const reasonOldest = new Map<string | null, Date | null>();
  if (unlisted.length && isScoped(scope))
    pairs.push(...(await findDlqPairs(db, { scope, subscriptionIds: [...new Set(unlisted.map((p) => p.subscriptionId))], oldest: true })));
  else if (unlisted.length && opts.subscriptionId) pairs.push(...(await findDlqPairs(db, { subscriptionId: opts.subscriptionId, oldest: true })));
  else if (unlisted.length) {
    pairs.push(...unlisted);
    // A walk of the time index reads about (all dead letters / the reason's) rows to find one of the reason; a seek per
    // pair costs about SEEK_ROWS rows' reads each (a few index pages a month).
    const total = depths.reduce((n, p) => n + p.depth, 0);
    const reasonDepth = new Map<string, number>();
    for (const p of depths) reasonDepth.set(p.reason ?? "", (reasonDepth.get(p.reason ?? "") ?? 0) + p.depth);
    const unlistedOf = new Map<string, DlqPairRow[]>();
    for (const p of unlisted) {
      const of = unlistedOf.get(p.reason ?? "");
      if (of) of.push(p);
      else unlistedOf.set(p.reason ?? "", [p]);
    }
    const walk: string[] = [];
    const seek: { subscriptionId: string; reason: string }[] = [];
    for (const [reason, ps] of unlistedOf) {
      if (ps.length * SEEK_ROWS < total / reasonDepth.get(reason)!) seek.push(...ps.map((p) => ({ subscriptionId: p.subscriptionId, reason })));
      else walk.push(reason);
    }
    for (const [reason, at] of await findDlqOldestByReason(db, { walk, seek })) reasonOldest.set(reason || null, at);
  }

  const age = (at: Date | null) => (at ? Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000)) : null);
  const roll = <K extends string | null>(of: typeof pairs, key: (p: (typeof pairs)[number]) => K, extra: Map<K, Date | null> = new Map()) => {
    const m = new Map<K, { depth: number; oldestAt: Date | null }>();
    for (const p of of) {
      const k = key(p);
      const cur = m.get(k) ?? { depth: 0, oldestAt: null };
      m.set(k, { depth: cur.depth + p.depth, oldestAt: older(cur.oldestAt, p.oldestAt) });
    }
    for (const [k, v] of m) m.set(k, { ...v, oldestAt: older(v.oldestAt, extra.get(k) ?? null) });
    return [...m.entries()].sort((a, b) => b[1].depth - a[1].depth);
  };
  const byReason = roll(pairs, (p) => p.reason, reasonOldest);
  const listedPairs = pairs.filter((p) => shown.has(p.subscriptionId));
  const bySubscription = roll(listedPairs, (p) => p.subscriptionId)
    .map(([id, v]) => ({ subscriptionId: id, subscriptionName: names.get(id) ?? null, depth: v.depth, oldestAgeSeconds: age(v.oldestAt) }))
    .sort((a, b) => b.depth - a.depth || byId(a.subscriptionId, b.subscriptionId));
  return {
    depth: pairs.reduce((s, p) => s + p.depth, 0),
    oldestAgeSeconds: age(byReason.reduce<Date | null>((o, [, v]) => older(o, v.oldestAt), null)),
    countedAt: now.toISOString(),
    groupsSampledAt: iso(groupsSampledAt),
    bySubscription,
    byReason: byReason.map(([reason, v]) => ({ reason, depth: v.depth, oldestAgeSeconds: age(v.oldestAt) })),
    bySubscriptionAndReason: listedPairs
      .map((p) => ({ subscriptionId: p.subscriptionId, reason: p.reason, depth: p.depth, oldestAgeSeconds: age(p.oldestAt) }))
      .sort((a, b) => b.depth - a.depth),
    groups: rows
      .map((g) => ({ ...g, oldestAt: iso(g.oldestAt), sampledAt: iso(g.sampledAt), subscriptionName: names.get(g.subscriptionId) ?? null }))
      .sort((a, b) => b.depth - a.depth),
    subscriptionCount: subDepth.size,
    matchingSubscriptionCount: matching.length,
  };
}

/**
 * GET /api/v1/dlq: `subscriptionId` counts one subscription only; `q`, `limit` and `include` narrow the subscriptions
 * listed (getDlqSummary's `q`, `subscriptionLimit`, `include`), the totals staying the whole DLQ's.
 */
export const ZDlqQuery = z
  .object({
    subscriptionId: z.string().max(64).optional(),
    q: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(10_000).optional(),
    include: z.string().max(64).optional(),
  })
  .strict();

export const ZDlqHistory = z.object({ hours: z.coerce.number().int().min(1).max(168).default(24) });

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };

/** Depth and oldest age over the last `hours`, downsampled to at most ~240 points (dlq_samples pk). */
export async function findDlqHistory(
  opts: { hours?: number; now?: Date; scope?: Scope } = {},
  db: LedgerDb = ledgerDb(),
): Promise<{ points: DlqPoint[]; bucketSeconds: number; gaps: { from: string; to: string }[] }> {
  const { hours } = ZDlqHistory.parse({ hours: opts.hours });
  const now = opts.now ?? new Date();
  const since = new Date(now.getTime() - hours * 3600_000);
  const bucketSeconds = Math.max(15, Math.ceil((hours * 3600) / 240 / 15) * 15);
  const rows = await findDlqHistoryRows(db, since, now, bucketSeconds, opts.scope ?? GLOBAL_SCOPE);
  const points = rows.map((r) => ({ at: iso(r.at)!, depth: r.depth, oldestAgeSeconds: r.oldestAgeSeconds === null ? null : Math.round(r.oldestAgeSeconds) }));
  return { bucketSeconds, points, gaps: sampleGaps(points, bucketSeconds) };
}

/**
 * The stretches between two points with no sample in them for longer than anything running takes between samples
 * (DLQ_SAMPLE_MAX_GAP_SECONDS, or three buckets on a long range): nothing was running to take one, so the depth and
 * age there are unknown, and a chart that drew the earlier sample across it would say they held (an oldest age of
 * 0 min for the whole night). `from` is the last point before, `to` the first after.
 */
function sampleGaps(points: readonly { at: string }[], bucketSeconds: number): { from: string; to: string }[] {
  const longest = Math.max(DLQ_SAMPLE_MAX_GAP_SECONDS, 3 * bucketSeconds) * 1000;
  const gaps: { from: string; to: string }[] = [];
  for (let i = 1; i < points.length; i++) if (Date.parse(points[i].at) - Date.parse(points[i - 1].at) > longest) gaps.push({ from: points[i - 1].at, to: points[i].at });
  return gaps;
}
