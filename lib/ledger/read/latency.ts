// Latency histogram buckets for attempt_stats_minute.latency_hist. Fixed bounds
// (upper edges, ms) so per-minute rows can be summed and p50/p95 estimated over
// any window without scanning attempts. Roughly log-spaced like prom-client's
// defaults, finer below a second where most endpoints answer.
import "server-only";
export const LATENCY_BOUNDS_MS = [5, 10, 25, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 15000, 30000] as const;
/** Number of buckets: one per bound plus the overflow bucket. */
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/** The bucket index (0-based) of a duration: the first bound it does not exceed. */
export function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]) return i;
  return LATENCY_BOUNDS_MS.length;
}

/** The width of an attempt_stats_hour bucket (UTC hours). */
export const STATS_HOUR_MS = 3_600_000;

/**
 * The q-quantile (0..1) estimated from a histogram, interpolating linearly
 * inside the bucket it falls in (as Prometheus' histogram_quantile does).
 * Null for an empty histogram.
 */
export function quantileFromHistogram(hist: number[], q: number): number | null {
  const total = hist.reduce((s, n) => s + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1];
      if (i >= LATENCY_BOUNDS_MS.length) return lo; // overflow bucket: report its lower edge
      const hi = LATENCY_BOUNDS_MS[i];
      return Math.round(lo + ((hi - lo) * (rank - seen)) / n);
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];
}

/**
 * SQL for the element-wise sum of a latency_hist column over the rows of a
 * GROUP BY, as an int[] of LATENCY_BUCKETS entries. One built-in sum() per
 * bucket: no unnest, no per-row function call, so summing a day of rows per
 * subscription stays in the database and one array per group leaves it.
 */
export function sumHistogramsSql(column: string): string {
  const parts = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `coalesce(sum(${column}[${i + 1}]), 0)`);
  return `ARRAY[${parts.join(", ")}]::int[]`;
}
