"use client";
// DLQ depth and oldest age over time, from the sampler's dlq_samples.
import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatAge } from "@/lib/dashboard/describe";
import { formatClock, formatTime, tzLabel, useTimeZone } from "../ui/time";

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };

/** An age short enough for an axis tick ("45 min", "4.4 h", "2.5 d"); the tooltip gives it in full. */
function shortAge(seconds: number): string {
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1).replace(/\.0$/, "")} h`;
  return `${(seconds / 86400).toFixed(1).replace(/\.0$/, "")} d`;
}

function Chart({
  points,
  dataKey,
  color,
  label,
  format,
  tick = format,
}: {
  points: DlqPoint[];
  dataKey: keyof DlqPoint;
  color: string;
  label: string;
  format: (v: number) => string;
  tick?: (v: number) => string;
}) {
  const tz = useTimeZone();
  return (
    <figure className="min-w-0 flex-1" data-testid={`chart-${dataKey}`}>
      <figcaption className="mb-1 text-sm font-medium text-slate-800">
        {label} <span className="font-normal text-slate-500">· times in {tzLabel(tz)}</span>
      </figcaption>
      <div className="h-48 w-full" role="img" aria-label={`${label} over time, ${points.length} samples`}>
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis dataKey="at" tickFormatter={(v: string) => formatClock(v, tz)} tick={{ fontSize: 11, fill: "#475569" }} minTickGap={24} />
            <YAxis tickFormatter={(v: number) => tick(v)} tick={{ fontSize: 11, fill: "#475569" }} width={64} allowDecimals={false} />
            <Tooltip labelFormatter={(v) => formatTime(String(v), tz)} formatter={(v) => [format(Number(v)), label]} />
            <Area type="stepAfter" dataKey={dataKey} stroke={color} fill={color} fillOpacity={0.15} isAnimationActive={false} connectNulls />
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

export function DlqCharts({ points }: { points: DlqPoint[] }) {
  return (
    <div className="flex flex-col gap-6 md:flex-row">
      <Chart points={points} dataKey="depth" color="#dc2626" label="Depth (dead-lettered deliveries)" format={(v) => v.toLocaleString()} />
      <Chart points={points} dataKey="oldestAgeSeconds" color="#7c3aed" label="Oldest dead letter's age" format={(v) => formatAge(v)} tick={shortAge} />
    </div>
  );
}
