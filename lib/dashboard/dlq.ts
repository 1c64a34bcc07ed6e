// The DLQ as the sampler saw it (lib/dlq/sampler.ts): depth and oldest age now,
// broken down by subscription and reason, and their history for the charts.
// Requests read dlq_samples / dlq_sample_groups only; when no recent sample
// exists (the sampler is not running, e.g. the CLI) the summary is computed
// from the deliveries_dlq partial index instead, and says so.
import { z } from "zod";
import { db, iso, type Db } from "./sql";

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

export async function getDlqSummary(opts: { now?: Date; subscriptionId?: string } = {}, pool: Db = db()): Promise<DlqSummary> {
  const now = opts.now ?? new Date();
  const { rows: latest } = await pool.query<{ sampled_at: Date }>("SELECT sampled_at FROM dlq_samples ORDER BY sampled_at DESC LIMIT 1");
  let groups: Omit<DlqGroup, "subscriptionName">[];
  let sampledAt: Date;
  let source: DlqSummary["source"];
  if (latest[0] && now.getTime() - latest[0].sampled_at.getTime() < FRESH_MS) {
    sampledAt = latest[0].sampled_at;
    source = "sample";
    const { rows } = await pool.query(
      `SELECT subscription_id, reason, error_class, status_code, depth, oldest_at FROM dlq_sample_groups WHERE sampled_at = $1`,
      [sampledAt],
    );
    groups = rows.map((r) => ({ subscriptionId: r.subscription_id, reason: r.reason, errorClass: r.error_class, statusCode: r.status_code, depth: r.depth, oldestAt: iso(r.oldest_at) }));
  } else {
    sampledAt = now;
    source = "live";
    const { rows } = await pool.query(
      `SELECT subscription_id, dead_letter_reason AS reason, last_error_class AS error_class, last_status_code AS status_code,
              count(*)::int AS depth, min(dead_lettered_at) AS oldest_at
       FROM deliveries WHERE state = 'dead_letter' GROUP BY 1, 2, 3, 4`,
    );
    groups = rows.map((r) => ({ subscriptionId: r.subscription_id, reason: r.reason, errorClass: r.error_class, statusCode: r.status_code, depth: r.depth, oldestAt: iso(r.oldest_at) }));
  }
  if (opts.subscriptionId) groups = groups.filter((g) => g.subscriptionId === opts.subscriptionId);
  const subIds = [...new Set(groups.map((g) => g.subscriptionId))];
  const names = new Map<string, string>();
  if (subIds.length) {
    const { rows } = await pool.query("SELECT id, name FROM subscriptions WHERE id = ANY($1::text[])", [subIds]);
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
    bySubscription: roll((g) => g.subscriptionId).map(([id, v]) => ({ subscriptionId: id, subscriptionName: names.get(id) ?? null, depth: v.depth, oldestAgeSeconds: age(v.oldestAt) })),
    byReason: roll((g) => g.reason).map(([reason, v]) => ({ reason, depth: v.depth, oldestAgeSeconds: age(v.oldestAt) })),
    groups: groups.map((g) => ({ ...g, subscriptionName: names.get(g.subscriptionId) ?? null })).sort((a, b) => b.depth - a.depth),
  };
}

export const ZDlqHistory = z.object({ hours: z.coerce.number().int().min(1).max(168).default(24) });

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };

/** Depth and oldest age over the last `hours`, downsampled to at most ~240 points (dlq_samples pk). */
export async function findDlqHistory(opts: { hours?: number; now?: Date } = {}, pool: Db = db()): Promise<{ points: DlqPoint[]; bucketSeconds: number }> {
  const { hours } = ZDlqHistory.parse({ hours: opts.hours });
  const now = opts.now ?? new Date();
  const since = new Date(now.getTime() - hours * 3600_000);
  const bucketSeconds = Math.max(15, Math.ceil((hours * 3600) / 240 / 15) * 15);
  const { rows } = await pool.query(
    `SELECT date_bin(make_interval(secs => $2), sampled_at, TIMESTAMPTZ '2000-01-01') AS at,
            max(depth)::int AS depth,
            max(EXTRACT(EPOCH FROM sampled_at - oldest_at))::float AS oldest_age
     FROM dlq_samples WHERE sampled_at >= $1 AND sampled_at <= $3
     GROUP BY 1 ORDER BY 1`,
    [since, bucketSeconds, now],
  );
  return {
    bucketSeconds,
    points: rows.map((r) => ({ at: iso(r.at)!, depth: r.depth, oldestAgeSeconds: r.oldest_age === null ? null : Math.round(r.oldest_age) })),
  };
}
