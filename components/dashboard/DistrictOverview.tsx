"use client";
// A district's landing: its own endpoints, each with its health (red, "Failing
// since …", while its newest attempts all fail), queue, dead letters and last
// failed answer, and the way into its deliveries. Shown on the
// lookup page to a viewer confined to one district, in place of the global
// view's blank start; the numbers come from the same scoped API the
// Subscriptions page polls, so they are the district's only.
import Link from "next/link";
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { formatAge } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { useNow } from "@/components/ui/time";
import { EmptyState, ErrorState, Skeleton, Stat, SubscriptionStateBadge, btn, card, ms, pct, textLink } from "@/components/ui/kit";
import { FailingSince, LastAnswer } from "@/components/subscriptions/FailingSince";
import type { ViewerTenant } from "./ViewerTenant";
import { num } from "@/lib/words";
import { windowHint, windowLags } from "@/components/subscriptions/window-hint";

function EndpointCard({ s, now }: { s: SubscriptionHealth; now: number }) {
  const c = s.counts;
  const queued = c.pending + c.scheduled + c.inFlight;
  return (
    <li className={`${card} ${s.failing ? "ring-2 ring-red-300" : ""}`} data-testid="district-endpoint" data-failing={s.failing ? "true" : "false"}>
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div className="min-w-0 wrap-anywhere">
          <Link href={`/subscriptions/${encodeURIComponent(s.id)}`} className="text-base font-semibold text-blue-700 hover:underline">
            {s.name}
          </Link>
          <div className="break-all font-mono text-xs text-slate-500">{s.url}</div>
        </div>
        <SubscriptionStateBadge s={s} />
      </div>
      {s.state !== "active" && s.stateReason && <p className="mt-1 text-sm text-amber-900">{s.stateReason}. New deliveries are held, not dropped.</p>}
      {s.failing && (
        <div className="mt-2">
          <FailingSince s={s} />
        </div>
      )}
      <dl className="mt-3 grid grid-cols-2 gap-3 sm:grid-cols-4">
        <Stat label="Success 24 h" value={pct(s.h24.successRate)} hint={windowHint(s.h24, windowLags(s.h24, s.lastAttempts, 86400_000, now))} />
        <Stat label="p95 1 h" value={ms(s.h1.p95Ms)} hint={`24 h: ${ms(s.h24.p95Ms)}`} />
        <Stat label={s.state === "active" ? "Queued" : "Held"} value={num(queued)} hint={`${num(c.delivered24h)} delivered 24 h`} />
        <Stat
          label="Dead letters"
          value={<span className={c.deadLetter ? "text-red-800" : undefined}>{num(c.deadLetter)}</span>}
          hint={c.deadLetter ? `oldest ${formatAge(s.dlqOldestAt ? (now - new Date(s.dlqOldestAt).getTime()) / 1000 : null)}` : "none"}
        />
      </dl>
      {!s.failing && (
        <p className="mt-2 text-sm text-slate-700">
          <span className="text-slate-500">Last failed answer: </span>
          <LastAnswer s={s} />
        </p>
      )}
      <div className="mt-3 flex flex-wrap gap-2">
        <Link href={`/subscriptions/${encodeURIComponent(s.id)}`} className={btn}>
          Deliveries, secrets and tests
        </Link>
        {c.deadLetter > 0 && (
          <Link href={`/dlq?subscriptionId=${encodeURIComponent(s.id)}`} className={btn}>
            Dead letters and reasons
          </Link>
        )}
      </div>
    </li>
  );
}

/** Endpoints shown here; a district with more finds the rest on the Subscriptions page, a page at a time. */
const OVERVIEW_ENDPOINTS = 20;

export function DistrictOverview({ district }: { district: NonNullable<ViewerTenant> }) {
  const now = useNow(15_000);
  // One page, state first (paused and disabled endpoints need the district's attention before healthy ones).
  const res = usePolled<{ items: SubscriptionHealth[]; nextCursor: string | null }>(`/api/v1/dashboard/subscriptions?sort=-state&limit=${OVERVIEW_ENDPOINTS}`, {
    intervalMs: 15_000,
  });
  const items = res.data?.items ?? [];
  return (
    <section aria-labelledby="district-endpoints" className="space-y-3">
      <div>
        <h2 id="district-endpoints" className="text-lg font-semibold text-slate-900">
          {district.name}: your endpoints
        </h2>
        <p className="text-sm text-slate-700">What hookledger is sending to {district.name}: health now, what is queued, what could not be delivered and why.</p>
      </div>
      {res.isPending ? (
        <div className={card} role="status" aria-label="Loading your endpoints">
          <Skeleton lines={4} />
        </div>
      ) : res.isError && !res.data ? (
        <ErrorState error={res.error} retry={() => res.refetch()} />
      ) : items.length === 0 ? (
        <EmptyState title="No endpoints yet">
          Create one from{" "}
          <Link href="/subscriptions" className={textLink}>
            Subscriptions
          </Link>
          , or ask the platform&apos;s support team to.
        </EmptyState>
      ) : (
        <ul className="grid grid-cols-1 gap-3 lg:grid-cols-2">
          {items.map((s) => (
            <EndpointCard key={s.id} s={s} now={now} />
          ))}
        </ul>
      )}
      {res.data?.nextCursor && (
        <p className="text-sm">
          <Link href="/subscriptions" className="text-blue-700 hover:underline">
            Every endpoint of {district.name}, searchable, on Subscriptions
          </Link>
        </p>
      )}
    </section>
  );
}
