// What the charts' axes show: the window a chart opens on (chosen from the
// data), the ranges a viewer can pick and how the URL names them, and even
// ticks whose labels never repeat. Plain functions: the server page picks the
// window, the client draws it, and test/dashboard/chart-axes.test.ts checks them.

import { listInWords } from "@/lib/words";

/** The ranges a chart offers, as the URL names them (?range=1h). */
export const CHART_RANGES = [
  { value: 1, key: "1h", label: "1 h" },
  { value: 6, key: "6h", label: "6 h" },
  { value: 24, key: "24h", label: "24 h" },
  { value: 168, key: "7d", label: "7 d" },
] as const;

/** ?range=6h → 6; anything else (missing, unknown) → null. */
export function rangeFromParam(v: string | string[] | undefined | null): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  return CHART_RANGES.find((r) => r.key === s)?.value ?? null;
}

export function rangeParam(hours: number): string {
  return CHART_RANGES.find((r) => r.value === hours)?.key ?? `${hours}h`;
}

/**
 * The window a DLQ chart opens on, from the last day's samples: the smallest range that holds every change of the
 * depth, or, when the depth never changed, all of the samples there are. A drain in the last half hour opens on the
 * last hour, not as a sliver at the right of a day.
 */
export function defaultRangeHours(points: readonly { at: string; depth: number }[], now: number): number {
  if (points.length === 0) return DAY_HOURS;
  const change = points.findIndex((p, i) => i > 0 && p.depth !== points[i - 1].depth);
  return rangeHolding(Date.parse(points[change > 0 ? change : 0].at), now);
}

/** The widest window a chart opens on by itself. */
const DAY_HOURS = 24;

/** The smallest range, up to a day, that holds everything since `since`; a day when it holds more. */
export function rangeHolding(since: number, now: number): number {
  const spanHours = (now - since) / 3600_000;
  return CHART_RANGES.find((r) => r.value <= DAY_HOURS && spanHours < r.value)?.value ?? DAY_HOURS;
}

/** Steps a count axis may take: 1, 2, 5, 10, 20, 25, 50, 100, … */
function countSteps(): number[] {
  const out: number[] = [];
  for (let m = 1; m <= 1e9; m *= 10) out.push(m, 2 * m, ...(m >= 10 ? [2.5 * m] : []), 5 * m);
  return out;
}

/** Whole-number ticks from 0 past `max`, at most five, evenly spaced (a count: deliveries, attempts). */
export function countTicks(max: number): number[] {
  const top = Math.max(1, Math.ceil(max));
  const step = countSteps().find((s) => Math.ceil(top / s) <= 4) ?? top;
  return Array.from({ length: Math.ceil(top / step) + 1 }, (_, i) => i * step);
}

const MIN = 60;
const HOUR = 3600;
const DAY = 86400;
const AGE_STEPS = [1, 2, 5, 10, 15, 20, 30]
  .map((m) => m * MIN)
  .concat(
    [1, 2, 3, 4, 6, 12].map((h) => h * HOUR),
    [1, 2, 7, 14, 30].map((d) => d * DAY),
  );

/**
 * Ticks for an age in seconds, at most five from 0, each a whole number of the unit its label uses ("15 min",
 * "2 h", "1 d"), so no two labels read the same (an age of 45 s no longer reads "0 min, 0 min, 1 min, 1 min").
 */
export function ageTicks(maxSeconds: number): { ticks: number[]; label: (seconds: number) => string } {
  const top = Math.max(MIN, maxSeconds);
  const step = AGE_STEPS.find((s) => Math.ceil(top / s) <= 4) ?? Math.ceil(top / 4 / DAY) * DAY;
  const ticks = Array.from({ length: Math.ceil(top / step) + 1 }, (_, i) => i * step);
  const [unit, name] = step % DAY === 0 ? [DAY, "d"] : step % HOUR === 0 ? [HOUR, "h"] : [MIN, "min"];
  return { ticks, label: (s) => `${Math.round(s / unit)} ${name}` };
}

/** The offset of `tz` from UTC at `at`, in ms (CET in winter: +3,600,000). */
function zoneOffsetMs(tz: string, at: number): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric" })
      .formatToParts(new Date(at))
      .map((p) => [p.type, Number(p.value)]),
  );
  const local = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute);
  return local - Math.floor(at / MIN / 1000) * MIN * 1000;
}

/** The time axis's step for a window: 10 min over an hour, 1 h over 6 h, 4 h over a day, a day over a week. */
function timeStepMs(hours: number): number {
  const minutes = hours <= 1 ? 10 : hours <= 6 ? 60 : hours <= 24 ? 240 : 1440;
  return minutes * MIN * 1000;
}

/** Ticks on whole steps of the viewer's clock (:00, :10, …; 00:00, 04:00, …) across the window [from, to]. */
export function timeTicks(from: number, to: number, tz: string): number[] {
  const step = timeStepMs((to - from) / 3600_000);
  const offset = zoneOffsetMs(tz, to);
  const ticks: number[] = [];
  for (let t = Math.ceil((from + offset) / step) * step - offset; t <= to; t += step) ticks.push(t);
  return ticks;
}

/** Whether a window's ticks need the day named ("3 Dec") rather than the clock ("14:00"). */
export function ticksNameDays(from: number, to: number): boolean {
  return to - from > 2 * DAY * 1000;
}

/**
 * What a line chart shows, in words, for its text alternative: where the series starts and ends in the window and its
 * highest point ("2,009 at 08:45, from 1,200 at 07:50; highest 2,050 at 08:30"). A screen reader gets the trend the
 * picture shows, not only how many samples drew it.
 */
export function seriesInWords(points: readonly { t: number; v: number | null }[], value: (v: number) => string, clock: (t: number) => string): string {
  const known = points.filter((p): p is { t: number; v: number } => p.v !== null);
  if (known.length === 0) return "no samples in this range";
  const first = known[0];
  const last = known[known.length - 1];
  const top = known.reduce((a, p) => (p.v > a.v ? p : a), first);
  const now = `${value(last.v)} at ${clock(last.t)}`;
  if (known.length === 1) return now;
  return `${now}, from ${value(first.v)} at ${clock(first.t)}; highest ${value(top.v)} at ${clock(top.t)}`;
}

/** A stretch of a sampled series with no sample: from the last point before it to the first after. */
export type SampleGap = { from: string; to: string };

/**
 * Under the charts: when nothing was recorded, so a break in the lines is read as what it is. The latest three
 * stretches by their times ("from 00:47 to 01:31 and from 02:10 to 02:40 UTC"), any earlier ones counted.
 */
export function gapsInWords(gaps: SampleGap[], clock: (iso: string) => string, zone: string): string | null {
  if (gaps.length === 0) return null;
  const shown = gaps.slice(-3).map((g) => `from ${clock(g.from)} to ${clock(g.to)}`);
  const earlier = gaps.length - shown.length;
  const more = earlier > 0 ? `, and ${earlier} earlier ${earlier === 1 ? "stretch" : "stretches"}` : "";
  return `Nothing recorded ${listInWords(shown, "and")} ${zone}${more}: hookledger was not running (or could not reach its database), so the lines break there.`;
}
