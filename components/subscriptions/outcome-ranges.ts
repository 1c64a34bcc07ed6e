// The outcomes chart's time ranges on a subscription's page. A plain module
// (not a client one), so the server page can read ?range= with the same list.
export const OUTCOME_RANGES = ["1h", "6h", "24h", "7d"] as const;
export type Range = (typeof OUTCOME_RANGES)[number];

/** The range from the page's ?range= (24h when absent or not one of the ranges). */
export function rangeOf(v: string | string[] | undefined): Range {
  return OUTCOME_RANGES.find((r) => r === v) ?? "24h";
}
