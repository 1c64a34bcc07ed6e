// The charts' axes: the window chosen from the data, ranges named in the URL, and even ticks whose labels never repeat.
import { describe, expect, it } from "vitest";
import { fittingRange } from "../../components/subscriptions/outcome-ranges";
import { ageTicks, countTicks, defaultRangeHours, gapsInWords, rangeFromParam, rangeParam, seriesInWords, timeTicks } from "../../components/charts/axes";

const NOW = Date.parse("2026-12-03T15:00:00Z");
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
/** Samples every `every` minutes over the last `span` minutes, depth from `depth(minutesAgo)`. */
const samples = (span: number, every: number, depth: (m: number) => number) =>
  Array.from({ length: Math.floor(span / every) + 1 }, (_, i) => span - i * every).map((m) => ({ at: at(m), depth: depth(m) }));

describe("the chart's default window", () => {
  it("is the last hour when a drain of the last half hour is all that changed in a day", () => {
    const drain = samples(24 * 60, 6, (m) => (m > 30 ? 40 : Math.round((40 * m) / 30)));
    expect(defaultRangeHours(drain, NOW)).toBe(1);
  });
  it("widens to hold every change of the day", () => {
    expect(
      defaultRangeHours(
        samples(24 * 60, 6, (m) => (m > 200 ? 3 : 5)),
        NOW,
      ),
    ).toBe(6);
    expect(
      defaultRangeHours(
        samples(24 * 60, 6, (m) => (m > 10 * 60 ? 3 : 5)),
        NOW,
      ),
    ).toBe(24);
  });
  it("holds all the samples there are when the depth never changed, and a day when there are none", () => {
    expect(
      defaultRangeHours(
        samples(20, 1, () => 0),
        NOW,
      ),
    ).toBe(1);
    expect(
      defaultRangeHours(
        samples(24 * 60, 6, () => 7),
        NOW,
      ),
    ).toBe(24);
    expect(defaultRangeHours([], NOW)).toBe(24);
  });
  it("is named in the URL as ?range=1h", () => {
    expect(rangeFromParam("1h")).toBe(1);
    expect(rangeFromParam("7d")).toBe(168);
    expect(rangeFromParam(["6h"])).toBe(6);
    expect(rangeFromParam("2h")).toBeNull();
    expect(rangeFromParam(undefined)).toBeNull();
    expect(rangeParam(24)).toBe("24h");
  });
});

describe("ticks", () => {
  it("an age axis never repeats a label, whatever the age", () => {
    for (const max of [0, 20, 45, 61, 90, 150, 600, 3599, 3700, 5400, 86_000, 200_000, 3_000_000]) {
      const { ticks, label } = ageTicks(max);
      const labels = ticks.map(label);
      expect(new Set(labels).size, `${max} s: ${labels.join(", ")}`).toBe(labels.length);
      expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(max);
      expect(ticks.length).toBeLessThanOrEqual(5);
      const steps = ticks.slice(1).map((t, i) => t - ticks[i]);
      expect(new Set(steps).size, `${max} s: even steps`).toBe(1);
    }
    expect(ageTicks(45).ticks.map(ageTicks(45).label)).toEqual(["0 min", "1 min"]);
    expect(ageTicks(5400).ticks.map(ageTicks(5400).label)).toEqual(["0 min", "30 min", "60 min", "90 min"]);
  });
  it("a count axis has whole, evenly spaced, distinct ticks", () => {
    for (const max of [0, 1, 2, 3, 7, 13, 99, 101, 4321]) {
      const t = countTicks(max);
      expect(t.every(Number.isInteger), `${max}: ${t}`).toBe(true);
      expect(new Set(t.slice(1).map((x, i) => x - t[i])).size).toBe(1);
      expect(t[t.length - 1]).toBeGreaterThanOrEqual(max);
      expect(t.length).toBeLessThanOrEqual(5);
    }
    expect(countTicks(1)).toEqual([0, 1]);
  });
  it("the time axis falls on whole steps of the viewer's clock", () => {
    const hour = timeTicks(NOW - 3600_000, NOW, "UTC").map((t) => new Date(t).toISOString().slice(11, 16));
    expect(hour).toEqual(["14:00", "14:10", "14:20", "14:30", "14:40", "14:50", "15:00"]);
    // India is 5:30 ahead: its whole hours fall on UTC's half hours.
    const sixIndia = timeTicks(NOW - 6 * 3600_000, NOW, "Asia/Kolkata").map((t) => new Date(t).toISOString().slice(11, 16));
    expect(sixIndia[0]).toBe("09:30");
    expect(sixIndia).toHaveLength(6);
    const day = timeTicks(NOW - 24 * 3600_000, NOW, "UTC");
    expect(day.map((t) => new Date(t).getUTCHours())).toEqual([16, 20, 0, 4, 8, 12]);
  });
});

describe("the outcomes chart's first range", () => {
  const now = Date.parse("2026-12-06T12:00:00Z");
  const point = (minutesAgo: number, delivered = 1) => ({ at: new Date(now - minutesAgo * 60_000).toISOString(), delivered, retried: 0, deadLettered: 0, abandoned: 0 });
  it("is the smallest of 1h, 6h and 24h that holds every attempt of the day; 24h when there was none", () => {
    expect(fittingRange([point(600, 0), point(20), point(5)], now)).toBe("1h");
    expect(fittingRange([point(600, 0), point(300), point(5)], now)).toBe("6h");
    expect(fittingRange([point(600), point(5)], now)).toBe("24h");
    expect(fittingRange([point(600, 0), point(5, 0)], now)).toBe("24h");
  });
});

describe("seriesInWords (a chart's text alternative)", () => {
  const clock = (t: number) => new Date(t).toISOString().slice(11, 16);
  const at = (hhmm: string) => Date.parse(`2026-03-02T${hhmm}:00Z`);
  it("says where the series ends, where it started and its highest point", () => {
    const points = [
      { t: at("07:50"), v: 1200 },
      { t: at("08:30"), v: 2050 },
      { t: at("08:45"), v: null },
      { t: at("08:46"), v: 2009 },
    ];
    expect(seriesInWords(points, String, clock)).toBe("2009 at 08:46, from 1200 at 07:50; highest 2050 at 08:30");
  });
  it("one sample, or none", () => {
    expect(seriesInWords([{ t: at("08:00"), v: 3 }], String, clock)).toBe("3 at 08:00");
    expect(seriesInWords([], String, clock)).toBe("no samples in this range");
  });
});

describe("the charts' gaps in words", () => {
  const clock = (iso: string) => iso.slice(11, 16);
  const gap = (from: number, to: number) => ({ from: at(from), to: at(to) });
  it("says nothing when every stretch has its samples", () => {
    expect(gapsInWords([], clock, "UTC")).toBeNull();
  });
  it("names each stretch with no sample by its times, the latest three, and counts the earlier ones", () => {
    expect(gapsInWords([gap(133, 89)], clock, "UTC")).toBe(
      "Nothing recorded from 12:47 to 13:31 UTC: hookledger was not running (or could not reach its database), so the lines break there.",
    );
    expect(gapsInWords([gap(600, 540), gap(300, 240), gap(133, 89)], clock, "UTC")).toMatch(
      /^Nothing recorded from 05:00 to 06:00, from 10:00 to 11:00 and from 12:47 to 13:31 UTC: /,
    );
    expect(gapsInWords([gap(900, 840), gap(800, 700), gap(600, 540), gap(300, 240), gap(133, 89)], clock, "UTC")).toMatch(
      /^Nothing recorded from 05:00 to 06:00, from 10:00 to 11:00 and from 12:47 to 13:31 UTC, and 2 earlier stretches: /,
    );
  });
});
