// The outcomes chart's time ranges on a subscription's page. A plain module
// (not a client one), so the server page can read ?range= with the same list.
import { rangeHolding, rangeParam } from "@/components/charts/axes";
export const OUTCOME_RANGES = ["1h", "6h", "24h", "7d"] as const;
export type Range = (typeof OUTCOME_RANGES)[number];

/** The range from the page's ?range= (24h when absent or not one of the ranges). */
export function rangeOf(v: string | string[] | undefined): Range {
  return OUTCOME_RANGES.find((r) => r === v) ?? "24h";
}

/** Whether the page's ?range= names one of the ranges (else the page picks one: fittingRange). */
export function isRange(v: string | string[] | undefined): v is Range {
  return OUTCOME_RANGES.some((r) => r === v);
}

/**
 * The range the chart opens on when the address names none: the smallest of 1h, 6h and 24h that holds every attempt
 * of the last day (24h when there was none). A subscription whose traffic began ten minutes ago opens on the last
 * hour, not as a sliver at the right of a day; the DLQ page's charts pick their window the same way.
 */
export function fittingRange(series: readonly { at: string; delivered: number; retried: number; deadLettered: number; abandoned: number }[], now: number): Range {
  const first = series.find((p) => p.delivered + p.retried + p.deadLettered + p.abandoned > 0);
  return first ? rangeOf(rangeParam(rangeHolding(Date.parse(first.at), now))) : "24h";
}
