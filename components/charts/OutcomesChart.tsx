"use client";
// Attempt outcomes over time for one subscription (attempt_stats_minute).
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { shortTime, tzLabel, useTimeZone } from "../dashboard/time";

export type OutcomePoint = { at: string; delivered: number; retried: number; deadLettered: number; abandoned: number };

export function OutcomesChart({ points, label }: { points: OutcomePoint[]; label: string }) {
  const tz = useTimeZone();
  const total = points.reduce((s, p) => s + p.delivered + p.retried + p.deadLettered + p.abandoned, 0);
  return (
    <figure aria-label={label} className="w-full">
      <div className="h-56 w-full" role="img" aria-label={`${label}: ${total} attempts in the range`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis dataKey="at" tickFormatter={(v: string) => shortTime(v, tz).slice(-8, -3)} tick={{ fontSize: 11, fill: "#475569" }} minTickGap={24} />
            <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#475569" }} />
            <Tooltip labelFormatter={(v) => `${shortTime(String(v), tz)} ${tzLabel(tz)}`} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="delivered" name="Delivered" stackId="a" fill="#059669" isAnimationActive={false} />
            <Bar dataKey="retried" name="Will retry" stackId="a" fill="#d97706" isAnimationActive={false} />
            <Bar dataKey="deadLettered" name="Dead-lettered" stackId="a" fill="#dc2626" isAnimationActive={false} />
            <Bar dataKey="abandoned" name="Abandoned (lease expired)" stackId="a" fill="#64748b" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="mt-1 text-xs text-slate-600">
        Attempts per bucket, times in {tzLabel(tz)}. {total === 0 ? "No attempts in this range." : `${total.toLocaleString()} attempts.`}
      </figcaption>
    </figure>
  );
}
