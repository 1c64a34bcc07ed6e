// Which alert conditions hold now, read from the database with the thresholds
// of deploy/prometheus/alerts.yml (lib/metrics/thresholds.ts): the dashboard's
// alerts page. Prometheus evaluates the rules over time; this answers "right
// now" for someone who has the dashboard open and no Prometheus at hand.
//
// Every query is bounded by what is queued, failing or recent, not by the
// subscriptions that exist nor by deliveries or attempts: counts from
// delivery_state_counts (its queue states' index), dead letters by index seeks
// on deliveries_dlq, attempt outcomes of the window from the per-minute rollup
// attempt_stats_minute (lib/rollups/sampler.ts), the queue head from
// deliveries_sub_due, and the names of the offending subscriptions only.
import "server-only";
import type pg from "pg";
import { ALERT_THRESHOLDS } from "./thresholds";
import { readLedgerSnapshot } from "./ledger";
import { findRecentDeadLetterCounts } from "../ledger/sql/counts";
import { findFailureWindows, type FailureWindow } from "../ledger/read/attempt-stats";
import { count } from "../words";

type AlertId = "dlq_oldest_age" | "dlq_growing" | "subscription_failing" | "no_worker_heartbeat" | "scheduling_late";

export type AlertCondition = {
  id: AlertId;
  /** The Prometheus alert name in deploy/prometheus/alerts.yml. */
  rule: string;
  title: string;
  severity: "page" | "warning";
  holds: boolean;
  /** The threshold, in words. */
  threshold: string;
  /** How this page measures it (where that differs from the rule). */
  measuredAs: string;
  /** Subscriptions (or the one global value) over the threshold, worst first: the first OFFENDERS_SHOWN. */
  offenders: { subscriptionId: string | null; subscriptionName: string | null; value: string }[];
  /** How many are over the threshold, those not listed included. */
  offenderCount: number;
};

// An outage that touches every district puts thousands of subscriptions over a threshold: listing them all made the
// page 2.6 MB at 4,000 (each named, linked and measured). The worst are listed, the rest counted; the Dead letters and
// Subscriptions pages find any one of them.
export const OFFENDERS_SHOWN = 25;

const T = ALERT_THRESHOLDS;

function duration(s: number): string {
  if (!Number.isFinite(s)) return "never";
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

export async function findAlertConditions(pool: pg.Pool): Promise<{ evaluatedAt: string; conditions: AlertCondition[] }> {
  const snap = await readLedgerSnapshot(pool);
  const [growth, failing, now] = await Promise.all([
    // Dead letters of the last window still in the DLQ, per subscription.
    findRecentDeadLetterCounts(pool, T.dlqGrowthWindowMinutes),
    // Failure share over the window from the per-minute rollup, and in each
    // of its thirds: failing "for 15 minutes" means failing in every third (a
    // third with no attempts at all does not count as failing, as the rule's
    // ratio of rates is then undefined and resets its `for`).
    findFailureWindows(pool, T.subscriptionFailingWindowMinutes).catch(() => [] as FailureWindow[]),
    pool.query<{ now: Date }>("SELECT now()"),
  ]);

  const oldest = snap.dlq.filter((d) => d.oldestAgeSeconds > T.dlqOldestAgeSeconds).sort((a, b) => b.oldestAgeSeconds - a.oldestAgeSeconds);
  const growing = growth.filter((g) => g.n >= T.dlqGrowth).sort((a, b) => b.n - a.n);
  const failingSubs = failing
    .filter(
      (f) =>
        f.attempts >= T.subscriptionFailingMinAttempts &&
        f.failed / f.attempts > T.subscriptionFailureRatio &&
        f.thirds.every((r) => r !== null && r > T.subscriptionFailureRatio),
    )
    .sort((a, b) => b.failed / b.attempts - a.failed / a.attempts);
  const shown = <T>(all: T[]) => all.slice(0, OFFENDERS_SHOWN);
  const offenders = [
    ...new Set([...shown(oldest).map((d) => d.subscription), ...shown(growing).map((g) => g.subscriptionId), ...shown(failingSubs).map((f) => f.subscription_id)]),
  ];
  const { rows: subs } = await pool.query<{ id: string; name: string }>("SELECT id, name FROM subscriptions WHERE id = ANY($1::text[])", [offenders]);
  const names = new Map(subs.map((s) => [s.id, s.name]));
  const named = (id: string) => ({ subscriptionId: id, subscriptionName: names.get(id) ?? null });
  const heartbeat = snap.newestHeartbeatAgeSeconds;
  const late = snap.oldestDueAgeSeconds;

  const conditions: AlertCondition[] = [
    {
      id: "dlq_oldest_age",
      rule: "HookledgerDlqOldestAge",
      title: "Dead letters waiting too long",
      severity: "page",
      holds: oldest.length > 0,
      threshold: `the oldest dead letter of a subscription is older than ${duration(T.dlqOldestAgeSeconds)}`,
      measuredAs: "the same gauge the rule reads (hookledger_dlq_oldest_age_seconds)",
      offenders: shown(oldest).map((d) => ({ ...named(d.subscription), value: `oldest ${duration(d.oldestAgeSeconds)}, depth ${d.depth}` })),
      offenderCount: oldest.length,
    },
    {
      id: "dlq_growing",
      rule: "HookledgerDlqGrowing",
      title: "Dead-letter queue growing",
      severity: "page",
      holds: growing.length > 0,
      threshold: `a subscription gains ${T.dlqGrowth} or more dead letters in ${T.dlqGrowthWindowMinutes} min`,
      measuredAs: `dead letters of the last ${T.dlqGrowthWindowMinutes} min still in the DLQ (the rule: net change of the depth)`,
      offenders: shown(growing).map((g) => ({ ...named(g.subscriptionId), value: `+${g.n} in ${T.dlqGrowthWindowMinutes} min` })),
      offenderCount: growing.length,
    },
    {
      id: "subscription_failing",
      rule: "HookledgerSubscriptionFailing",
      title: "Subscription failing",
      severity: "warning",
      holds: failingSubs.length > 0,
      threshold: `over ${Math.round(T.subscriptionFailureRatio * 100)}% of a subscription's attempts fail for ${T.subscriptionFailingWindowMinutes} min (at least ${T.subscriptionFailingMinAttempts} attempts)`,
      measuredAs: `the per-minute attempt rollup, over the whole ${T.subscriptionFailingWindowMinutes} min and in each third of it`,
      offenders: shown(failingSubs).map((f) => ({
        ...named(f.subscription_id),
        value: `${Math.round((f.failed / f.attempts) * 100)}% of ${f.attempts} attempts failed`,
      })),
      offenderCount: failingSubs.length,
    },
    {
      id: "no_worker_heartbeat",
      rule: "HookledgerNoWorkerHeartbeat",
      title: "No worker heartbeat",
      severity: "page",
      holds: heartbeat > T.heartbeatMaxAgeSeconds,
      threshold: `no running worker has beaten for ${T.heartbeatMaxAgeSeconds} s`,
      measuredAs: "worker_heartbeats, as GET /api/health does",
      offenders: [
        {
          subscriptionId: null,
          subscriptionName: null,
          value: Number.isFinite(heartbeat)
            ? `newest heartbeat ${duration(heartbeat)} ago (${count(snap.workers.length, "worker")} registered)`
            : "no running worker has ever beaten",
        },
      ],
      offenderCount: 1,
    },
    {
      id: "scheduling_late",
      rule: "HookledgerSchedulingLate",
      title: "Deliveries starting late",
      severity: "page",
      holds: late > T.schedulingLatenessSeconds,
      threshold: `due deliveries wait over ${T.schedulingLatenessSeconds} s to start`,
      measuredAs: "the wait of the oldest due delivery of an active subscription (the rule also uses the workers' p99 lateness)",
      offenders: [{ subscriptionId: null, subscriptionName: null, value: late > 0 ? `oldest due delivery waiting ${duration(late)}` : "nothing overdue" }],
      offenderCount: 1,
    },
  ];
  return { evaluatedAt: now.rows[0].now.toISOString(), conditions };
}
