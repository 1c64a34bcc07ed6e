"use client";
// DLQ depth and oldest age over time, from the sampler's dlq_samples.
import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatAge } from "@/lib/dashboard/describe";
import { shortTime, tzLabel, useTimeZone } from "../dashboard/time";

export type DlqPoint = { at: string; depth: number; oldestAgeSeconds: number | null };

function Chart({ points, dataKey, color, label, format }: { points: DlqPoint[]; dataKey: keyof DlqPoint; color: string; label: string; format: (v: number) => string }) {
  const tz = useTimeZone();
  return (
    <figure className="min-w-0 flex-1" data-testid={`chart-${dataKey}`}>
      <figcaption className="mb-1 text-sm font-medium text-slate-800">{label}</figcaption>
      <div className="h-48 w-full" role="img" aria-label={`${label} over time, ${points.length} samples`}>
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis dataKey="at" tickFormatter={(v: string) => shortTime(v, tz).slice(-8, -3)} tick={{ fontSize: 11, fill: "#475569" }} minTickGap={24} />
            <YAxis tickFormatter={(v: number) => format(v)} tick={{ fontSize: 11, fill: "#475569" }} width={64} allowDecimals={false} />
            <Tooltip labelFormatter={(v) => `${shortTime(String(v), tz)} ${tzLabel(tz)}`} formatter={(v) => [format(Number(v)), label]} />
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
      <Chart points={points} dataKey="oldestAgeSeconds" color="#7c3aed" label="Oldest dead letter's age" format={(v) => formatAge(v)} />
    </div>
  );
}
