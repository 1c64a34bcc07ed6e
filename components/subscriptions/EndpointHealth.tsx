"use client";
// The endpoint's health as the failure window sees it: why the subscription is
// paused and since when, the failed run that paused it, the last probe's
// answer and the next probe, how many deliveries are held meanwhile, and a
// Retry-After the endpoint asked every worker to respect (health.heldUntil). Read
// from the subscription itself (GET /api/v1/subscriptions/:id), polled.
import type { EndpointHealthView, PausedReason } from "@/lib/subscriptions/failure-policy";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import { Card, ErrorState, Skeleton, ms } from "@/components/ui/kit";
import { count } from "@/lib/words";

type SubscriptionRead = {
  state: string;
  pausedReason: PausedReason | null;
  pausedAt: string | null;
  failurePolicy: { windowSeconds: number; minAttempts: number; probeIntervalSeconds: number } | null;
  health: EndpointHealthView;
};

function duration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

function probeAnswer(p: NonNullable<EndpointHealthView["lastProbe"]>): string {
  const answer = p.status !== null && p.status >= 200 && p.status < 300 ? `answered ${p.status}` : (p.error ?? `answered ${p.status}`);
  return p.latencyMs !== null ? `${answer} in ${ms(p.latencyMs)}` : answer;
}

/** `held`: the subscription's pending and scheduled deliveries (the page's counts). */
export function EndpointHealth({ subscriptionId, held }: { subscriptionId: string; held: number }) {
  const tz = useTimeZone();
  const q = usePolled<SubscriptionRead>(`/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}`);
  const s = q.data;
  const heldText = count(held, "delivery is", "deliveries are");
  const at = (iso: string) => <time dateTime={iso}>{formatTime(iso, tz)}</time>;
  return (
    <Card title="Endpoint health" id="endpoint-health">
      {q.isError && !s ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : !s ? (
        <Skeleton lines={2} />
      ) : (
        <div className="flex flex-col gap-2 text-sm text-slate-800">
          {s.state === "paused" && s.pausedReason === "failing" && (
            <p className="rounded-md bg-amber-50 p-2 text-amber-900 ring-1 ring-amber-200">
              <strong>Paused (failing)</strong>
              {s.pausedAt && <> since {at(s.pausedAt)}</>}: every attempt
              {s.health.failingSince && <> since {at(s.health.failingSince)}</>} failed ({s.health.failedAttempts} attempts). {heldText} held, not dropped; they go out
              oldest first when a probe is answered with a 2xx.
            </p>
          )}
          {s.state === "paused" && s.pausedReason !== "failing" && (
            <p>
              <strong>Paused by hand</strong>
              {s.pausedAt && <> since {at(s.pausedAt)}</>}. {heldText} held until it is resumed.
            </p>
          )}
          {s.state === "active" && s.health.heldUntil && (
            <p className="rounded-md bg-sky-50 p-2 text-sky-900 ring-1 ring-sky-200" data-testid="held-by-endpoint">
              <strong>Waiting, as the endpoint asked</strong>: it answered 429 or 503 with Retry-After, so nothing is sent to it before {at(s.health.heldUntil)}.{" "}
              {heldText} waiting, not dropped.
            </p>
          )}
          {s.state !== "paused" &&
            (s.health.failedAttempts > 0 && s.health.failingSince ? (
              <p>
                {count(s.health.failedAttempts, "failed attempt")} in a row since {at(s.health.failingSince)}.
              </p>
            ) : (
              <p>The last attempt succeeded (or none has failed).</p>
            ))}
          <dl className="grid grid-cols-1 gap-x-6 gap-y-1 sm:grid-cols-[auto_1fr]">
            <dt className="text-slate-600">Last probe</dt>
            <dd>
              {s.health.lastProbe ? (
                <>
                  {probeAnswer(s.health.lastProbe)}, {at(s.health.lastProbe.at)}
                </>
              ) : (
                "none yet"
              )}
            </dd>
            {s.health.nextProbeAt && (
              <>
                <dt className="text-slate-600">Next probe</dt>
                <dd>{at(s.health.nextProbeAt)}</dd>
              </>
            )}
            <dt className="text-slate-600">Failure window</dt>
            <dd>
              {s.failurePolicy
                ? `pause when every attempt fails for ${duration(s.failurePolicy.windowSeconds)} (at least ${s.failurePolicy.minAttempts}); then probe every ${duration(s.failurePolicy.probeIntervalSeconds)}, backing off to hourly`
                : "off: this subscription is never paused for failing"}
            </dd>
          </dl>
        </div>
      )}
    </Card>
  );
}
