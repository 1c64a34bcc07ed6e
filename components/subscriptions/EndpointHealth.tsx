"use client";
// The endpoint's health: what its last delivery attempts did, and the failure
// window's side: why the subscription is paused and since when, the failed run
// that paused it or counts toward a pause, the last probe's answer and the next
// probe, how many deliveries are held meanwhile, and a Retry-After the endpoint
// asked every worker to respect (health.heldUntil). The window's side is read
// from the subscription itself (GET /api/v1/subscriptions/:id), polled.
//
// The last attempts come from the page's overview (`lastAttempts`), the read
// behind the header's "Failing since", so the two cannot disagree. The
// window's run is no substitute: it is kept only while the policy is on,
// restarts when the subscription is resumed (by hand or by a probe's 2xx) and
// is not counted on a 410, so "none failed" read from it can sit beside an
// endpoint that is failing; it is shown only as what counts toward a pause.
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import type { EndpointHealthView, PausedReason } from "@/lib/subscriptions/failure-policy";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import { Card, ErrorState, Skeleton, ms } from "@/components/ui/kit";
import { count, num } from "@/lib/words";

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

/** "The last 4 delivery attempts failed, since 07:44:31; the last success was at 07:40:02." Test sends and probes are not delivery attempts. */
function LastAttempts({ last, at }: { last: SubscriptionHealth["lastAttempts"]; at: (iso: string) => React.ReactNode }) {
  const delivered = last.deliveredAt ? <>the last success was at {at(last.deliveredAt)}</> : "no success in the last 30 days";
  if (last.failed > 0 && last.failedSince)
    return (
      <p data-testid="last-attempts">
        {last.failed === 1 ? "The last delivery attempt failed" : `The last ${num(last.failed)} delivery attempts failed`}, since {at(last.failedSince)}; {delivered}.
      </p>
    );
  if (last.deliveredAt) return <p data-testid="last-attempts">The last delivery attempt succeeded, at {at(last.deliveredAt)}.</p>;
  return <p data-testid="last-attempts">No delivery attempts in the last 30 days.</p>;
}

/** `held`: the subscription's pending and scheduled deliveries (the page's counts); `lastAttempts`: the page's overview. */
export function EndpointHealth({ subscriptionId, held, lastAttempts }: { subscriptionId: string; held: number; lastAttempts: SubscriptionHealth["lastAttempts"] }) {
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
          {!(s.state === "paused" && s.pausedReason === "failing") && <LastAttempts last={lastAttempts} at={at} />}
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
            {s.failurePolicy && s.state === "active" && s.health.failedAttempts > 0 && s.health.failingSince && (
              <>
                <dt className="text-slate-600">Counted toward a pause</dt>
                <dd data-testid="toward-pause">
                  {count(s.health.failedAttempts, "failed attempt")} in a row since {at(s.health.failingSince)}
                </dd>
              </>
            )}
          </dl>
        </div>
      )}
    </Card>
  );
}
