"use client";
// DLQ depth and oldest age over time, from the sampler's dlq_samples, across the whole window asked for (an empty
// stretch shows as empty, not squeezed away), with even ticks on both axes. A stretch with no sample (nothing was
// running to take one: the API's gaps) is a break in both lines, said in words under them, never the last sample
// drawn across it.
import { useMemo } from "react";
import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatAge } from "@/lib/dashboard/describe";
import { formatClock, formatTime, tzLabel, useTimeZone } from "../ui/time";
import { ageTicks, countTicks, gapsInWords, seriesInWords, ticksNameDays, timeTicks, type SampleGap } from "./axes";
import { num } from "@/lib/words";

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };
type Row = { t: number; depth: number | null; oldestAgeSeconds: number | null };
export type { SampleGap };
type Window = { from: number; to: number };

function Chart({
  rows,
  window: w,
  dataKey,
  color,
  label,
  format,
  y,
  xLabel,
}: {
  rows: Row[];
  window: Window;
  xLabel: (t: number) => string;
  dataKey: "depth" | "oldestAgeSeconds";
  color: string;
  label: string;
  format: (v: number) => string;
  y: { ticks: number[]; label: (v: number) => string };
}) {
  const tz = useTimeZone();
  return (
    <figure className="min-w-0 flex-1" data-testid={`chart-${dataKey}`}>
      <figcaption className="mb-1 text-sm font-medium text-slate-800">
        {label} <span className="font-normal text-slate-500">· times in {tzLabel(tz)}</span>
      </figcaption>
      <div
        className="h-48 w-full"
        role="img"
        aria-label={`${label}: ${seriesInWords(
          rows.map((r) => ({ t: r.t, v: r[dataKey] })),
          format,
          (t) => formatClock(new Date(t).toISOString(), tz),
        )}`}
      >
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={rows} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={[w.from, w.to]}
              ticks={timeTicks(w.from, w.to, tz)}
              tickFormatter={xLabel}
              tick={{ fontSize: 11, fill: "#475569" }}
              interval="preserveStartEnd"
              allowDataOverflow
            />
            <YAxis
              ticks={y.ticks}
              domain={[0, y.ticks[y.ticks.length - 1]]}
              tickFormatter={(v: number) => y.label(v)}
              tick={{ fontSize: 11, fill: "#475569" }}
              width={56}
              interval={0}
              allowDecimals={false}
            />
            <Tooltip labelFormatter={(v) => formatTime(new Date(Number(v)).toISOString(), tz)} formatter={(v) => [format(Number(v)), label]} />
            <Area type="stepAfter" dataKey={dataKey} stroke={color} fill={color} fillOpacity={0.15} isAnimationActive={false} connectNulls={false} />
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

/** The rows to draw: the points, with an empty row just after each gap's last point, so both lines break there. */
function chartRows(points: DlqPoint[], gaps: SampleGap[]): Row[] {
  const breaks = new Set(gaps.map((g) => g.from));
  return points.flatMap((p) => {
    const t = Date.parse(p.at);
    const row: Row = { t, depth: p.depth, oldestAgeSeconds: p.oldestAgeSeconds };
    return breaks.has(p.at) ? [row, { t: t + 1, depth: null, oldestAgeSeconds: null }] : [row];
  });
}

/** Both charts over the window [from, to] (epoch ms); `gaps`, the stretches with no sample, as breaks. */
export function DlqCharts({ points, gaps = [], from, to }: { points: DlqPoint[]; gaps?: SampleGap[]; from: number; to: number }) {
  const tz = useTimeZone();
  const rows = chartRows(points, gaps);
  const maxDepth = Math.max(0, ...rows.map((r) => r.depth ?? 0));
  const maxAge = Math.max(0, ...rows.map((r) => r.oldestAgeSeconds ?? 0));
  const w = { from, to: Math.max(to, ...rows.map((r) => r.t)) };
  const depthTicks = countTicks(maxDepth);
  const formats = useMemo(
    () => ({
      day: new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: tz }),
      dayAndClock: new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hour12: false, timeZone: tz }),
    }),
    [tz],
  );
  // Over days, the x-axis names days ("4 Dec") and each end of a gap its day and clock ("4 Dec, 01:36"); the zone once, at the end.
  const days = ticksNameDays(w.from, w.to);
  const xLabel = (t: number) => (days ? formats.day.format(new Date(t)) : formatClock(new Date(t).toISOString(), tz));
  const note = gapsInWords(gaps, (iso) => (days ? formats.dayAndClock.format(new Date(iso)) : formatClock(iso, tz)), tzLabel(tz));
  return (
    <div>
      <div className="flex flex-col gap-6 md:flex-row">
        <Chart
          rows={rows}
          window={w}
          dataKey="depth"
          color="#dc2626"
          label="Depth (dead-lettered deliveries)"
          format={(v) => num(v)}
          y={{ ticks: depthTicks, label: (v) => num(v) }}
          xLabel={xLabel}
        />
        <Chart
          rows={rows}
          window={w}
          dataKey="oldestAgeSeconds"
          color="#7c3aed"
          label="Oldest dead letter's age"
          format={(v) => formatAge(v)}
          y={ageTicks(maxAge)}
          xLabel={xLabel}
        />
      </div>
      {note && (
        <p className="mt-2 text-xs text-slate-600" data-testid="dlq-gaps">
          {note}
        </p>
      )}
    </div>
  );
}
