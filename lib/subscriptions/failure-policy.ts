// The failure-window policy and the pause state as the API shows and takes
// them (lib/ledger/sql/subscription-state.ts keeps the run, pauses and
// resumes; the worker's prober, lib/ledger/sql/probe.ts, asks). Stored as three columns, all
// null when the policy is off.
import type { Subscription } from "../generated/prisma/client";
import type { TFailurePolicy } from "./subscription-input";

export type PausedReason = "manual" | "failing";

export type EndpointHealthView = {
  /** The current run of failed attempts: since when, and how many (null and 0 while the last attempt succeeded). */
  failingSince: string | null;
  failedAttempts: number;
  /** The last probe's answer, while or after the subscription was paused for failing. */
  lastProbe: { at: string; status: number | null; error: string | null; latencyMs: number | null } | null;
  /** When the next probe is due (paused for failing only). */
  nextProbeAt: string | null;
  probeCount: number;
  /** Until when the endpoint asked to be left alone (Retry-After on a 429 or 503): nothing is sent to it before then. Null when not held. */
  heldUntil: string | null;
};

type Row = Pick<
  Subscription,
  | "state"
  | "failureWindowSeconds"
  | "failureMinAttempts"
  | "probeIntervalSeconds"
  | "pausedReason"
  | "pausedAt"
  | "failingSince"
  | "failingAttempts"
  | "nextProbeAt"
  | "probeCount"
  | "lastProbeAt"
  | "lastProbeStatus"
  | "lastProbeError"
  | "lastProbeLatencyMs"
  | "heldUntil"
>;

export function failurePolicyOf(s: Row): TFailurePolicy | null {
  if (s.failureWindowSeconds === null || s.failureMinAttempts === null || s.probeIntervalSeconds === null) return null;
  return { windowSeconds: s.failureWindowSeconds, minAttempts: s.failureMinAttempts, probeIntervalSeconds: s.probeIntervalSeconds };
}

/** Why a subscription is paused, while it is: the failure window's pause says so; any other pause is an operator's. */
export function pausedReasonOf(state: string, pausedReason: string | null): PausedReason | null {
  if (state !== "paused") return null;
  return pausedReason === "failing" ? "failing" : "manual";
}

/** The fields a subscription read adds: `pausedReason` and `pausedAt` only while paused. */
export function pauseView(s: Row) {
  const paused = s.state === "paused";
  return {
    pausedReason: pausedReasonOf(s.state, s.pausedReason),
    pausedAt: paused ? (s.pausedAt?.toISOString() ?? null) : null,
    failurePolicy: failurePolicyOf(s),
    health: {
      failingSince: s.failingSince?.toISOString() ?? null,
      failedAttempts: s.failingAttempts,
      lastProbe: s.lastProbeAt ? { at: s.lastProbeAt.toISOString(), status: s.lastProbeStatus, error: s.lastProbeError, latencyMs: s.lastProbeLatencyMs } : null,
      nextProbeAt: s.nextProbeAt?.toISOString() ?? null,
      probeCount: s.probeCount,
      heldUntil: s.heldUntil && s.heldUntil.getTime() > Date.now() ? s.heldUntil.toISOString() : null,
    } satisfies EndpointHealthView,
  };
}

/** The columns a create or PATCH writes for `failurePolicy` (undefined: leave as is, so the defaults on create). */
export function failurePolicyColumns(p: TFailurePolicy | null | undefined) {
  if (p === undefined) return {};
  return { failureWindowSeconds: p?.windowSeconds ?? null, failureMinAttempts: p?.minAttempts ?? null, probeIntervalSeconds: p?.probeIntervalSeconds ?? null };
}
