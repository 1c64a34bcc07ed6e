"use client";
// Attempt outcomes over time for one subscription (attempt_stats_minute).
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { ATTEMPT_OUTCOMES, type AttemptOutcome } from "@/lib/ledger/states";
import { ATTEMPT_OUTCOME_LABELS } from "../ui/labels";
import { formatClock, formatTime, tzLabel, useTimeZone } from "../ui/time";
import { countTicks } from "./axes";
import { num } from "@/lib/words";

export type OutcomePoint = { at: string; delivered: number; retried: number; deadLettered: number; abandoned: number };

/** One stacked series per attempt outcome, in the ledger's order, named by its label. */
const SERIES: Record<AttemptOutcome, { key: Exclude<keyof OutcomePoint, "at">; color: string }> = {
  delivered: { key: "delivered", color: "#059669" },
  retry: { key: "retried", color: "#d97706" },
  dead_letter: { key: "deadLettered", color: "#dc2626" },
  abandoned: { key: "abandoned", color: "#64748b" },
};
const sentenceCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function OutcomesChart({
  points,
  label,
  emptyWords = "No attempts in this range.",
}: {
  points: OutcomePoint[];
  label: string;
  /** The caption's words when the points hold no attempt (components/subscriptions/window-hint.ts outcomesEmptyWords). */
  emptyWords?: string;
}) {
  const tz = useTimeZone();
  const perBucket = points.map((p) => p.delivered + p.retried + p.deadLettered + p.abandoned);
  const total = perBucket.reduce((s, n) => s + n, 0);
  // Whole, evenly spaced counts: a bucket of 1 attempt no longer reads "0, 0, 1, 1".
  const yTicks = countTicks(Math.max(0, ...perBucket));
  // The text alternative: what the stacked bars add up to, outcome by outcome (colour alone told them apart).
  const byOutcome = ATTEMPT_OUTCOMES.map((o) => `${num(points.reduce((s, p) => s + p[SERIES[o].key], 0))} ${ATTEMPT_OUTCOME_LABELS[o]}`).join(", ");
  return (
    <figure aria-label={label} className="w-full">
      <div className="h-56 w-full" role="img" aria-label={`${label}: ${num(total)} attempts in the range${total ? `: ${byOutcome}` : ""}`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
            <XAxis dataKey="at" tickFormatter={(v: string) => formatClock(v, tz)} tick={{ fontSize: 11, fill: "#475569" }} minTickGap={24} />
            <YAxis ticks={yTicks} domain={[0, yTicks[yTicks.length - 1]]} interval={0} allowDecimals={false} tick={{ fontSize: 11, fill: "#475569" }} />
            <Tooltip labelFormatter={(v) => formatTime(String(v), tz)} />
            {/* The names in the page's text colour, the swatch beside each in its series': recharts writes them in the
                series' colour, and amber and green on white are 3.2:1 and 3.8:1, short of the 4.5:1 small text needs. */}
            <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={null} formatter={(value) => <span className="text-slate-700">{value}</span>} />
            {ATTEMPT_OUTCOMES.map((o) => (
              <Bar key={o} dataKey={SERIES[o].key} name={sentenceCase(ATTEMPT_OUTCOME_LABELS[o])} stackId="a" fill={SERIES[o].color} isAnimationActive={false} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="mt-1 text-xs text-slate-600">
        Attempts per bucket, times in {tzLabel(tz)}. <span data-testid="outcomes-total">{total === 0 ? emptyWords : `${num(total)} attempts.`}</span>
      </figcaption>
    </figure>
  );
}
