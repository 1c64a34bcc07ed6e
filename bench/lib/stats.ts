function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const r = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
  return { n: s.length, p50: r(quantile(s, 0.5)), p95: r(quantile(s, 0.95)), p99: r(quantile(s, 0.99)), max: r(s.length ? s[s.length - 1] : null) };
}

/** The middle item by `value` (the upper middle of an even count): the run that is reported for repeated measurements. */
export function medianBy<T>(items: T[], value: (x: T) => number): T {
  return [...items].sort((a, b) => value(a) - value(b))[Math.floor(items.length / 2)];
}

export const round = (x: number, digits = 0) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};
