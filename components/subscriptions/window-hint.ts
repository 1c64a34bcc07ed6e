// The line under a "Success 1 h" or "Success 24 h" tile. The tiles and the outcomes chart are read from the
// per-minute counts (attempt_stats_minute, rolled up each minute), while "Failing since" and the last attempts are
// read from the attempts themselves: for up to a minute the tile can count fewer attempts than the header names
// ("0 of 0 attempts" beside "its last 4 attempts all failed"). It then says it is behind, not something else; so does
// the chart when it counts none yet.
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { num } from "@/lib/words";

type Window = Pick<SubscriptionHealth["h1"], "attempts" | "delivered">;

/**
 * Whether the window counts fewer attempts than the live read knows of within it: the failed run (all of it inside the
 * window when it began inside it), or a success inside the window when the window counts none.
 */
export function windowLags(w: Window, last: SubscriptionHealth["lastAttempts"], windowMs: number, now: number): boolean {
  const inside = (iso: string | null) => iso !== null && now - new Date(iso).getTime() < windowMs;
  const known = (inside(last.failedSince) ? last.failed : 0) + (inside(last.deliveredAt) ? 1 : 0);
  return w.attempts < known;
}

/** "3 of 4 attempts"; while the counts lag: "0 attempts counted yet (counted each minute)". */
export function windowHint(w: Window, lags: boolean): string {
  if (!lags) return `${num(w.delivered)} of ${num(w.attempts)} attempts`;
  return w.attempts === 0 ? "0 attempts counted yet (counted each minute)" : `${num(w.delivered)} of ${num(w.attempts)} attempts counted so far (counted each minute)`;
}

/**
 * The outcomes chart's line when its counts hold no attempt: "No attempts in this range.", or while the live read knows
 * of attempts the counts do not hold yet (`lags`, as for the tiles), that they are on their way, not that there are none.
 */
export function outcomesEmptyWords(lags: boolean): string {
  return lags ? "The newest attempts are counted each minute; they show here shortly." : "No attempts in this range.";
}
