// The alert thresholds, in one place: deploy/prometheus/alerts.yml uses the
// same numbers (test/dashboard/alerts-rules.test.ts checks that the two agree), and the
// dashboard's alerts page evaluates the same conditions against the database.
export const ALERT_THRESHOLDS = {
  /** HookledgerDlqOldestAge: the oldest dead letter of a subscription is older than this (1 h: someone should look the same working hour). */
  dlqOldestAgeSeconds: 3600,
  /** HookledgerDlqGrowing: a subscription's DLQ grew by at least this many deliveries over the window. */
  dlqGrowth: 10,
  dlqGrowthWindowMinutes: 15,
  /** HookledgerSubscriptionFailing: share of a subscription's attempts that did not deliver, sustained for the window. */
  subscriptionFailureRatio: 0.5,
  subscriptionFailingWindowMinutes: 15,
  /** Fewer attempts than this in the window are too few to call a subscription failing. */
  subscriptionFailingMinAttempts: 10,
  /** HookledgerNoWorkerHeartbeat: no worker has beaten for this long (workers beat every ~5 s). */
  heartbeatMaxAgeSeconds: 30,
  /** HookledgerSchedulingLate: p99 of (attempt start − due time) over this. */
  schedulingLatenessSeconds: 60,
} as const;

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number of seconds (got "${raw}"); unset it for the default ${fallback}.`);
  return n;
}

/** /api/health's heartbeat threshold: HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE seconds (default 30, like the alert). */
export function healthMaxHeartbeatAgeSeconds(): number {
  return positiveNumber("HOOKLEDGER_HEALTH_MAX_HEARTBEAT_AGE", ALERT_THRESHOLDS.heartbeatMaxAgeSeconds);
}
